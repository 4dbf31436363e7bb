package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"minicp/controlplane"
	"minicp/e2e/framework"
	"minicp/lease"
)

// nodeEvents lists the events about node name, by reason, with who
// reported each ("kubelet" or "node-controller", in either API's field).
func nodeEvents(t *testing.T, s *framework.Stack, name string) map[string]corev1.Event {
	t.Helper()
	list, err := s.Clientset.CoreV1().Events("").List(framework.Context(t, 10*time.Second), metav1.ListOptions{
		FieldSelector: fields.Set{"involvedObject.kind": "Node", "involvedObject.name": name}.String(),
	})
	if err != nil {
		t.Fatalf("listing events: %v", err)
	}
	byReason := map[string]corev1.Event{}
	for _, e := range list.Items {
		byReason[e.Reason] = e
	}
	return byReason
}

// reporter is the component that recorded e, in either API's field.
func reporter(e corev1.Event) string {
	if e.Source.Component != "" {
		return e.Source.Component
	}
	return e.ReportingController
}

// M11: a node's life is told in events, as on a real cluster: the kubelet
// says it started and its node is healthy and Ready; the node lifecycle
// controller says it registered the node, that it is NotReady once its
// heartbeats stop, and that it removed it when the Node is deleted. The
// reasons and messages are upstream's; kubectl shows them.
func TestNodeLifecycleIsRecordedAsEvents(t *testing.T) {
	const grace = 3 * time.Second
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.Nodes.Simulated = 1
		c.Nodes.Agent.LeaseDuration = 2 * time.Second // renewed every 500 ms, six times a grace period
		c.Nodes.LifecycleController = true
		c.Nodes.Controller.GracePeriod = grace
		c.Nodes.Controller.MonitorPeriod = monitorPeriod
	}})
	const node = "node-0"
	want := map[string]struct{ source, message string }{
		lease.ReasonStarting:                {lease.KubeletComponent, "Starting kubelet."},
		lease.ReasonNodeHasSufficientMemory: {lease.KubeletComponent, "Node node-0 status is now: NodeHasSufficientMemory"},
		lease.ReasonNodeHasNoDiskPressure:   {lease.KubeletComponent, "Node node-0 status is now: NodeHasNoDiskPressure"},
		lease.ReasonNodeHasSufficientPID:    {lease.KubeletComponent, "Node node-0 status is now: NodeHasSufficientPID"},
		lease.ReasonNodeReady:               {lease.KubeletComponent, "Node node-0 status is now: NodeReady"},
		lease.ReasonRegisteredNode:          {lease.ControllerComponent, "Node node-0 event: Registered Node node-0 in Controller"},
	}
	checkEvents := func(reasons ...string) func() bool {
		return func() bool {
			got := nodeEvents(t, s, node)
			for _, r := range reasons {
				e, ok := got[r]
				if !ok || reporter(e) != want[r].source || e.Message != want[r].message || e.Type != corev1.EventTypeNormal {
					return false
				}
			}
			return true
		}
	}
	framework.Eventually(t, 20*time.Second, "the kubelet's and the controller's start-up events", checkEvents(
		lease.ReasonStarting, lease.ReasonNodeHasSufficientMemory, lease.ReasonNodeHasNoDiskPressure,
		lease.ReasonNodeHasSufficientPID, lease.ReasonNodeReady, lease.ReasonRegisteredNode))
	// Heartbeats for longer than a grace period (and the passes that
	// follow it) leave the node Ready and unrecorded as NotReady.
	heartbeating := time.Now()
	framework.Eventually(t, 20*time.Second, "heartbeats for a grace period", func() bool {
		l, err := s.Clientset.CoordinationV1().Leases(lease.NodeLeaseNamespace).Get(framework.Context(t, 10*time.Second), node, metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime != nil && l.Spec.RenewTime.Sub(heartbeating) > grace+2*monitorPeriod
	})
	if _, seen := nodeEvents(t, s, node)[lease.ReasonNodeNotReady]; seen {
		t.Fatalf("NodeNotReady recorded while the node heartbeats")
	}
	n, err := s.Clientset.CoreV1().Nodes().Get(framework.Context(t, 10*time.Second), node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// The kubelet stops: after the grace period the controller marks the
	// node Unknown and says so, once, about the Node's real UID.
	s.ControlPlane.Agent().Stop()
	want[lease.ReasonNodeNotReady] = struct{ source, message string }{lease.ControllerComponent, "Node node-0 status is now: NodeNotReady"}
	framework.Eventually(t, 20*time.Second, "a NodeNotReady event", checkEvents(lease.ReasonNodeNotReady))
	notReady := nodeEvents(t, s, node)[lease.ReasonNodeNotReady]
	if notReady.InvolvedObject.UID != n.UID {
		t.Errorf("NodeNotReady is about UID %q, want the Node's %q", notReady.InvolvedObject.UID, n.UID)
	}
	if kubelet := nodeEvents(t, s, node)[lease.ReasonNodeReady]; kubelet.InvolvedObject.UID != "node-0" {
		t.Errorf("the kubelet's NodeReady is about UID %q, want the node's name, as the kubelet's", kubelet.InvolvedObject.UID)
	}

	if _, err := exec.LookPath("kubectl"); err == nil {
		assertContains(t, "kubectl get events", kubectl(t, s, "get", "events", "-A"),
			"NodeNotReady", "node/node-0", "Node node-0 status is now: NodeNotReady", "RegisteredNode", "NodeHasSufficientMemory")
		described := kubectl(t, s, "describe", "node", node)
		_, events, _ := strings.Cut(described, "Events:")
		// describe finds both the controller's events (by the Node's UID)
		// and the kubelet's (by its name as UID).
		assertContains(t, "kubectl describe node's events", events, "NodeNotReady", "RegisteredNode", "Starting", "NodeReady", "node-controller", "kubelet")
	} else {
		t.Log("kubectl is not installed: checked the events through the API only")
	}

	// The Node is deleted: the controller says it removed it.
	if err := s.Clientset.CoreV1().Nodes().Delete(framework.Context(t, 10*time.Second), node, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want[lease.ReasonRemovingNode] = struct{ source, message string }{lease.ControllerComponent, fmt.Sprintf("Node %s event: Removing Node %s from Controller", node, node)}
	framework.Eventually(t, 20*time.Second, "a RemovingNode event", checkEvents(lease.ReasonRemovingNode))
}
