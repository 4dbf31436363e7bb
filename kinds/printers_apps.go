package kinds

// `kubectl get` columns for workloads, as upstream's printers define them:
// Deployments, ReplicaSets, StatefulSets, DaemonSets, ReplicationControllers,
// ControllerRevisions, Jobs, CronJobs, PodTemplates and autoscalers.

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/duration"

	"minicp/registry"
)

// column is a table column; priority 1 columns show with -o wide only.
func column(name, typ, description string, priority int32) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ, Description: description, Priority: priority}
}

// The wide columns every workload shows about its pod template.
var (
	containersColumn = column("Containers", "string", "Names of each container in the template.", 1)
	imagesColumn     = column("Images", "string", "Images referenced by each container in the template.", 1)
	selectorColumn   = column("Selector", "string", "Label selector for the pods this object manages.", 1)
)

// containersAndImages joins a template's container names and images.
func containersAndImages(spec *corev1.PodSpec) (string, string) {
	var names, images []string
	for _, c := range spec.Containers {
		names, images = append(names, c.Name), append(images, c.Image)
	}
	return strings.Join(names, ","), strings.Join(images, ",")
}

// selectorString prints a label selector as upstream's printers do ("" for
// none).
func selectorString(s *metav1.LabelSelector) string {
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return "<error>"
	}
	return sel.String()
}

func replicasOf(p *int32) int64 {
	if p == nil {
		return 0
	}
	return int64(*p)
}

var deploymentPrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn,
		column("Ready", "string", "Number of the pod with ready state", 0),
		column("Up-to-date", "integer", appsv1.DeploymentStatus{}.SwaggerDoc()["updatedReplicas"], 0),
		column("Available", "integer", appsv1.DeploymentStatus{}.SwaggerDoc()["availableReplicas"], 0),
		registry.AgeColumn, containersColumn, imagesColumn, selectorColumn,
	},
	func(d *appsv1.Deployment, now time.Time) metav1.TableRow {
		containers, images := containersAndImages(&d.Spec.Template.Spec)
		return metav1.TableRow{Cells: []any{
			d.Name, fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, replicasOf(d.Spec.Replicas)),
			int64(d.Status.UpdatedReplicas), int64(d.Status.AvailableReplicas), age(d.CreationTimestamp.Time, now),
			containers, images, selectorString(d.Spec.Selector),
		}}
	},
)

// replicaColumns are Desired, Current and Ready, as for ReplicaSets and
// ReplicationControllers.
var replicaColumns = []metav1.TableColumnDefinition{
	registry.NameColumn,
	column("Desired", "integer", "Number of desired pods", 0),
	column("Current", "integer", "Number of actual replicas", 0),
	column("Ready", "integer", "Number of ready replicas", 0),
	registry.AgeColumn, containersColumn, imagesColumn, selectorColumn,
}

var replicaSetPrinter = registry.TypedPrinter(replicaColumns, func(rs *appsv1.ReplicaSet, now time.Time) metav1.TableRow {
	containers, images := containersAndImages(&rs.Spec.Template.Spec)
	return metav1.TableRow{Cells: []any{
		rs.Name, replicasOf(rs.Spec.Replicas), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas),
		age(rs.CreationTimestamp.Time, now), containers, images, selectorString(rs.Spec.Selector),
	}}
})

var replicationControllerPrinter = registry.TypedPrinter(replicaColumns, func(rc *corev1.ReplicationController, now time.Time) metav1.TableRow {
	var containers, images string
	if rc.Spec.Template != nil {
		containers, images = containersAndImages(&rc.Spec.Template.Spec)
	}
	return metav1.TableRow{Cells: []any{
		rc.Name, replicasOf(rc.Spec.Replicas), int64(rc.Status.Replicas), int64(rc.Status.ReadyReplicas),
		age(rc.CreationTimestamp.Time, now), containers, images, labels.FormatLabels(rc.Spec.Selector),
	}}
})

var statefulSetPrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn, column("Ready", "string", "Number of the pod with ready state", 0),
		registry.AgeColumn, containersColumn, imagesColumn,
	},
	func(ss *appsv1.StatefulSet, now time.Time) metav1.TableRow {
		containers, images := containersAndImages(&ss.Spec.Template.Spec)
		return metav1.TableRow{Cells: []any{
			ss.Name, fmt.Sprintf("%d/%d", ss.Status.ReadyReplicas, replicasOf(ss.Spec.Replicas)),
			age(ss.CreationTimestamp.Time, now), containers, images,
		}}
	},
)

var daemonSetPrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn,
		column("Desired", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["desiredNumberScheduled"], 0),
		column("Current", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["currentNumberScheduled"], 0),
		column("Ready", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["numberReady"], 0),
		column("Up-to-date", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["updatedNumberScheduled"], 0),
		column("Available", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["numberAvailable"], 0),
		column("Node Selector", "string", corev1.PodSpec{}.SwaggerDoc()["nodeSelector"], 0),
		registry.AgeColumn, containersColumn, imagesColumn, selectorColumn,
	},
	func(ds *appsv1.DaemonSet, now time.Time) metav1.TableRow {
		containers, images := containersAndImages(&ds.Spec.Template.Spec)
		st := ds.Status
		return metav1.TableRow{Cells: []any{
			ds.Name, int64(st.DesiredNumberScheduled), int64(st.CurrentNumberScheduled), int64(st.NumberReady),
			int64(st.UpdatedNumberScheduled), int64(st.NumberAvailable), orNone(labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector)),
			age(ds.CreationTimestamp.Time, now), containers, images, selectorString(ds.Spec.Selector),
		}}
	},
)

var controllerRevisionPrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn,
		column("Controller", "string", "Controller of the object", 0),
		column("Revision", "integer", appsv1.ControllerRevision{}.SwaggerDoc()["revision"], 0),
		registry.AgeColumn,
	},
	func(cr *appsv1.ControllerRevision, now time.Time) metav1.TableRow {
		controller := "<none>"
		if ref := metav1.GetControllerOf(cr); ref != nil {
			controller = strings.ToLower(ref.Kind) + "." + strings.SplitN(ref.APIVersion, "/", 2)[0] + "/" + ref.Name
			if !strings.Contains(ref.APIVersion, "/") {
				controller = strings.ToLower(ref.Kind) + "/" + ref.Name
			}
		}
		return metav1.TableRow{Cells: []any{cr.Name, controller, cr.Revision, age(cr.CreationTimestamp.Time, now)}}
	},
)

var jobPrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn,
		column("Status", "string", "Status of the job.", 0),
		column("Completions", "string", batchv1.JobStatus{}.SwaggerDoc()["succeeded"], 0),
		column("Duration", "string", "Time required to complete the job.", 0),
		registry.AgeColumn, containersColumn, imagesColumn, selectorColumn,
	},
	func(job *batchv1.Job, now time.Time) metav1.TableRow {
		completions := fmt.Sprintf("%d/1 of %d", job.Status.Succeeded, replicasOf(job.Spec.Parallelism))
		if job.Spec.Completions != nil {
			completions = fmt.Sprintf("%d/%d", job.Status.Succeeded, *job.Spec.Completions)
		}
		var jobDuration string
		switch {
		case job.Status.StartTime == nil:
		case job.Status.CompletionTime == nil:
			jobDuration = duration.HumanDuration(now.Sub(job.Status.StartTime.Time))
		default:
			jobDuration = duration.HumanDuration(job.Status.CompletionTime.Sub(job.Status.StartTime.Time))
		}
		containers, images := containersAndImages(&job.Spec.Template.Spec)
		return metav1.TableRow{Cells: []any{
			job.Name, jobStatus(job), completions, jobDuration, age(job.CreationTimestamp.Time, now),
			containers, images, selectorString(job.Spec.Selector),
		}}
	},
)

// jobStatus is the Status column: the first true terminal condition,
// Suspended, Terminating, or Running.
func jobStatus(job *batchv1.Job) string {
	for _, want := range []batchv1.JobConditionType{batchv1.JobComplete, batchv1.JobFailed, batchv1.JobFailureTarget, batchv1.JobSuccessCriteriaMet, batchv1.JobSuspended} {
		for _, c := range job.Status.Conditions {
			if c.Type == want && c.Status == corev1.ConditionTrue {
				return string(want)
			}
		}
	}
	if job.DeletionTimestamp != nil {
		return "Terminating"
	}
	return "Running"
}

var cronJobPrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn,
		column("Schedule", "string", batchv1.CronJobSpec{}.SwaggerDoc()["schedule"], 0),
		column("Timezone", "string", batchv1.CronJobSpec{}.SwaggerDoc()["timeZone"], 0),
		column("Suspend", "boolean", batchv1.CronJobSpec{}.SwaggerDoc()["suspend"], 0),
		column("Active", "integer", batchv1.CronJobStatus{}.SwaggerDoc()["active"], 0),
		column("Last Schedule", "string", batchv1.CronJobStatus{}.SwaggerDoc()["lastScheduleTime"], 0),
		registry.AgeColumn, containersColumn, imagesColumn, selectorColumn,
	},
	func(cj *batchv1.CronJob, now time.Time) metav1.TableRow {
		last := "<none>"
		if t := cj.Status.LastScheduleTime; t != nil {
			last = age(t.Time, now)
		}
		timeZone := "<none>"
		if cj.Spec.TimeZone != nil {
			timeZone = *cj.Spec.TimeZone
		}
		containers, images := containersAndImages(&cj.Spec.JobTemplate.Spec.Template.Spec)
		return metav1.TableRow{Cells: []any{
			cj.Name, cj.Spec.Schedule, timeZone, cj.Spec.Suspend != nil && *cj.Spec.Suspend, int64(len(cj.Status.Active)), last,
			age(cj.CreationTimestamp.Time, now), containers, images, selectorString(cj.Spec.JobTemplate.Spec.Selector),
		}}
	},
)

var podTemplatePrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn,
		column("Containers", "string", "Names of each container in the template.", 0),
		column("Images", "string", "Images referenced by each container in the template.", 0),
		column("Pod Labels", "string", "The labels for the pod template.", 0),
	},
	func(pt *corev1.PodTemplate, now time.Time) metav1.TableRow {
		containers, images := containersAndImages(&pt.Template.Spec)
		return metav1.TableRow{Cells: []any{pt.Name, containers, images, orNone(labels.FormatLabels(pt.Template.Labels))}}
	},
)

var hpaPrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn,
		column("Reference", "string", autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["scaleTargetRef"], 0),
		column("Targets", "string", autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["metrics"], 0),
		column("MinPods", "string", autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["minReplicas"], 0),
		column("MaxPods", "integer", autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["maxReplicas"], 0),
		column("Replicas", "integer", autoscalingv2.HorizontalPodAutoscalerStatus{}.SwaggerDoc()["currentReplicas"], 0),
		registry.AgeColumn,
	},
	func(hpa *autoscalingv2.HorizontalPodAutoscaler, now time.Time) metav1.TableRow {
		ref := hpa.Spec.ScaleTargetRef
		minPods := "<unset>"
		if hpa.Spec.MinReplicas != nil {
			minPods = fmt.Sprint(*hpa.Spec.MinReplicas)
		}
		return metav1.TableRow{Cells: []any{
			hpa.Name, ref.Kind + "/" + ref.Name, hpaTargets(hpa), minPods, int64(hpa.Spec.MaxReplicas),
			int64(hpa.Status.CurrentReplicas), age(hpa.CreationTimestamp.Time, now),
		}}
	},
)

// hpaTargets prints each metric's target as "<unknown>/80%" or
// "<unknown>/500m" (minicp runs no metrics pipeline: current values are
// never known).
func hpaTargets(hpa *autoscalingv2.HorizontalPodAutoscaler) string {
	var out []string
	for _, m := range hpa.Spec.Metrics {
		target := "<unknown>"
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil {
			switch t := m.Resource.Target; {
			case t.AverageUtilization != nil:
				target = fmt.Sprintf("%d%%", *t.AverageUtilization)
			case t.AverageValue != nil:
				target = t.AverageValue.String()
			}
			target = fmt.Sprintf("%s: <unknown>/%s", m.Resource.Name, target)
		}
		out = append(out, target)
	}
	if len(out) == 0 {
		return "<none>"
	}
	return strings.Join(out, ", ")
}
