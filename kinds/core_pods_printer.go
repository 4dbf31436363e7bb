package kinds

// The `kubectl get pods` columns, worked out from a pod's status as
// upstream's printer does (READY, STATUS, RESTARTS).

import (
	"fmt"
	"minicp/registry/rest"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var podPrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		{Name: "Ready", Type: "string", Description: "The aggregate readiness state of this pod for accepting traffic."},
		{Name: "Status", Type: "string", Description: "The aggregate status of the containers in this pod."},
		{Name: "Restarts", Type: "string", Description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."},
		rest.AgeColumn,
		{Name: "IP", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["podIP"]},
		{Name: "Node", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["nodeName"]},
		{Name: "Nominated Node", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["nominatedNodeName"]},
		{Name: "Readiness Gates", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["readinessGates"]},
	},
	podRow,
)

// podSummary is what the Ready, Status and Restarts columns show.
type podSummary struct {
	ready, total int
	reason       string
	restarts     int
	lastRestart  time.Time
}

func podRow(pod *corev1.Pod, now time.Time) metav1.TableRow {
	s := summarizePod(pod)
	restarts := strconv.Itoa(s.restarts)
	if s.restarts != 0 && !s.lastRestart.IsZero() {
		restarts = fmt.Sprintf("%d (%s ago)", s.restarts, age(s.lastRestart, now))
	}
	ip := "<none>"
	if len(pod.Status.PodIPs) > 0 && pod.Status.PodIPs[0].IP != "" {
		ip = pod.Status.PodIPs[0].IP
	}
	row := metav1.TableRow{Cells: []any{
		pod.Name, fmt.Sprintf("%d/%d", s.ready, s.total), s.reason, restarts, age(pod.CreationTimestamp.Time, now),
		ip, orNone(pod.Spec.NodeName), orNone(pod.Status.NominatedNodeName), readinessGates(pod),
	}}
	// Upstream marks finished pods so clients can tell them apart.
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		row.Conditions = []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue,
			Reason: string(corev1.PodSucceeded), Message: "The pod has completed successfully."}}
	case corev1.PodFailed:
		row.Conditions = []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue,
			Reason: string(corev1.PodFailed), Message: "The pod failed."}}
	}
	return row
}

// summarizePod computes the Ready, Status and Restarts columns.
func summarizePod(pod *corev1.Pod) podSummary {
	s := podSummary{total: len(pod.Spec.Containers), reason: string(pod.Status.Phase)}
	if pod.Status.Reason != "" {
		s.reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			s.reason = corev1.PodReasonSchedulingGated
		}
	}
	sidecars := map[string]bool{} // init containers that keep running (restartPolicy Always)
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars[c.Name] = true
			s.total++
		}
	}
	initializing := summarizeInitContainers(pod, sidecars, &s)
	if !initializing || podConditionTrue(pod, corev1.PodInitialized) {
		summarizeContainers(pod, &s)
	}
	switch {
	case pod.DeletionTimestamp != nil && pod.Status.Reason == "NodeLost":
		s.reason = "Unknown"
	case pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed:
		s.reason = "Terminating"
	}
	return s
}

// summarizeInitContainers walks init containers in order and stops at the
// first one still in the way; it reports whether the pod is initializing.
// Restarts of all init containers count while it is.
func summarizeInitContainers(pod *corev1.Pod, sidecars map[string]bool, s *podSummary) bool {
	for i, c := range pod.Status.InitContainerStatuses {
		s.restarts += int(c.RestartCount)
		s.lastRestart = later(s.lastRestart, lastTermination(c))
		switch {
		case c.State.Terminated != nil && c.State.Terminated.ExitCode == 0:
			continue
		case sidecars[c.Name] && c.Started != nil && *c.Started:
			if c.Ready {
				s.ready++
			}
			continue
		case c.State.Terminated != nil:
			s.reason = "Init:" + terminatedReason(c.State.Terminated)
		case c.State.Waiting != nil && c.State.Waiting.Reason != "" && c.State.Waiting.Reason != "PodInitializing":
			s.reason = "Init:" + c.State.Waiting.Reason
		default:
			s.reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		return true
	}
	return false
}

// summarizeContainers counts ready containers and restarts (sidecars'
// included, other init containers' not) and takes the status from the
// containers' states, the first container's winning.
func summarizeContainers(pod *corev1.Pod, s *podSummary) {
	s.restarts, s.lastRestart = 0, time.Time{}
	for _, c := range pod.Status.InitContainerStatuses {
		if c.RestartCount > 0 && podSidecar(pod, c.Name) {
			s.restarts += int(c.RestartCount)
			s.lastRestart = later(s.lastRestart, lastTermination(c))
		}
	}
	hasRunning := false
	for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
		c := pod.Status.ContainerStatuses[i]
		s.restarts += int(c.RestartCount)
		s.lastRestart = later(s.lastRestart, lastTermination(c))
		switch {
		case c.State.Waiting != nil && c.State.Waiting.Reason != "":
			s.reason = c.State.Waiting.Reason
		case c.State.Terminated != nil:
			s.reason = terminatedReason(c.State.Terminated)
		case c.Ready && c.State.Running != nil:
			hasRunning = true
			s.ready++
		}
	}
	if s.reason == "Completed" && hasRunning {
		s.reason = "NotReady"
		if podConditionTrue(pod, corev1.PodReady) {
			s.reason = "Running"
		}
	}
}

// terminatedReason is the container's reason, or its signal or exit code.
func terminatedReason(t *corev1.ContainerStateTerminated) string {
	switch {
	case t.Reason != "":
		return t.Reason
	case t.Signal != 0:
		return fmt.Sprintf("Signal:%d", t.Signal)
	default:
		return fmt.Sprintf("ExitCode:%d", t.ExitCode)
	}
}

func lastTermination(c corev1.ContainerStatus) time.Time {
	if t := c.LastTerminationState.Terminated; t != nil {
		return t.FinishedAt.Time
	}
	return time.Time{}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func podSidecar(pod *corev1.Pod, name string) bool {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		}
	}
	return false
}

func podConditionTrue(pod *corev1.Pod, t corev1.PodConditionType) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// readinessGates is "<true gates>/<gates>" or "<none>".
func readinessGates(pod *corev1.Pod) string {
	if len(pod.Spec.ReadinessGates) == 0 {
		return "<none>"
	}
	passing := 0
	for _, g := range pod.Spec.ReadinessGates {
		if podConditionTrue(pod, g.ConditionType) {
			passing++
		}
	}
	return fmt.Sprintf("%d/%d", passing, len(pod.Spec.ReadinessGates))
}
