package kinds

// Jobs (batch/v1): upstream's defaults, the selector a Job gets from its
// UID, the main rules of upstream's validation, and columns. Deleting a
// Job orphans its pods by default, as upstream.

import (
	"fmt"
	"math"
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"time"
	_ "time/tzdata"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// jobsEntry describes the jobs resource (batch/v1 Job).
func jobsEntry() *registry.Resource {
	return entry(apigroups.BatchV1, "jobs", "Job", true, "/registry/jobs",
		func() runtime.Object { return &batchv1.Job{} }, func() runtime.Object { return &batchv1.JobList{} },
		&registry.Resource{Categories: []string{"all"}, Strategy: jobStrategy, Subresources: []string{"status"}, Printer: jobPrinter,
			SelectableFields: func(obj runtime.Object) fields.Set {
				return fields.Set{"status.successful": itoa(obj.(*batchv1.Job).Status.Succeeded)}
			}})
}

// defaultJob: one completion at a time when neither is given, 6 retries,
// NonIndexed, not suspended, pods replaced once terminating or failed; the
// Job's labels are its template's when it has none.
func defaultJob(job *batchv1.Job) {
	spec := &job.Spec
	if spec.Completions == nil && spec.Parallelism == nil {
		spec.Completions = int32Ptr(1)
	}
	defaultInt32(&spec.Parallelism, 1)
	if spec.BackoffLimit == nil {
		if spec.BackoffLimitPerIndex != nil {
			spec.BackoffLimit = int32Ptr(math.MaxInt32)
		} else {
			spec.BackoffLimit = int32Ptr(6)
		}
	}
	if spec.Template.Labels != nil && len(job.Labels) == 0 {
		job.Labels = spec.Template.Labels
	}
	if spec.CompletionMode == nil {
		mode := batchv1.NonIndexedCompletion
		spec.CompletionMode = &mode
	}
	if spec.Suspend == nil {
		suspend := false
		spec.Suspend = &suspend
	}
	if spec.PodReplacementPolicy == nil {
		policy := batchv1.TerminatingOrFailed
		if spec.PodFailurePolicy != nil {
			policy = batchv1.Failed
		}
		spec.PodReplacementPolicy = &policy
	}
	defaultPodSpec(&spec.Template.Spec)
}

const jobControllerUIDLabel = "batch.kubernetes.io/controller-uid"

const jobNameLabel = "batch.kubernetes.io/job-name"

const legacyJobControllerUIDLabel = "controller-uid"

const legacyJobNameLabel = "job-name"

// generateJobSelector gives a Job without a manual selector the selector
// of its own UID, and its template the labels that match it, as upstream
// does before validating a new Job. It needs the UID: run it after the
// system fields are set.
func generateJobSelector(job *batchv1.Job) {
	if job.Spec.ManualSelector != nil && *job.Spec.ManualSelector {
		return
	}
	uid := string(job.UID)
	t := &job.Spec.Template
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	for k, v := range map[string]string{
		legacyJobControllerUIDLabel: uid, jobControllerUIDLabel: uid,
		legacyJobNameLabel: job.Name, jobNameLabel: job.Name,
	} {
		if _, set := t.Labels[k]; !set {
			t.Labels[k] = v
		}
	}
	if job.Spec.Selector == nil {
		job.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{jobControllerUIDLabel: uid}}
	}
}

var jobRestartPolicies = []corev1.RestartPolicy{corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}

func validateJob(job *batchv1.Job) field.ErrorList {
	spec, path := &job.Spec, field.NewPath("spec")
	var errs field.ErrorList
	for name, v := range map[string]*int32{"parallelism": spec.Parallelism, "completions": spec.Completions, "backoffLimit": spec.BackoffLimit} {
		errs = append(errs, validateNonNegative(v, path.Child(name))...)
	}
	if d := spec.ActiveDeadlineSeconds; d != nil && *d <= 0 {
		errs = append(errs, field.Invalid(path.Child("activeDeadlineSeconds"), *d, "must be greater than 0"))
	}
	var sel labels.Selector
	if spec.Selector == nil {
		errs = append(errs, field.Required(path.Child("selector"), ""))
	} else {
		var selErrs field.ErrorList
		sel, selErrs = validateWorkloadSelector(spec.Selector, path.Child("selector"))
		errs = append(errs, selErrs...)
	}
	errs = append(errs, validateTemplate(&spec.Template, sel, path.Child("template"), jobRestartPolicies...)...)
	modes := []batchv1.CompletionMode{batchv1.NonIndexedCompletion, batchv1.IndexedCompletion}
	if m := spec.CompletionMode; m != nil && !contains(modes, *m) {
		errs = append(errs, field.NotSupported(path.Child("completionMode"), *m, modes))
	}
	if m := spec.CompletionMode; m != nil && *m == batchv1.IndexedCompletion && spec.Completions == nil {
		errs = append(errs, field.Required(path.Child("completions"), "when completion mode is Indexed"))
	}
	return errs
}

// validateJobUpdate: a Job's selector, completion mode and (unless it is
// suspended) pod template do not change.
func validateJobUpdate(job, old *batchv1.Job) field.ErrorList {
	path := field.NewPath("spec")
	errs := validation.ValidateImmutableField(job.Spec.Selector, old.Spec.Selector, path.Child("selector"))
	errs = append(errs, validation.ValidateImmutableField(job.Spec.CompletionMode, old.Spec.CompletionMode, path.Child("completionMode"))...)
	if old.Spec.Suspend == nil || !*old.Spec.Suspend {
		errs = append(errs, validation.ValidateImmutableField(job.Spec.Template, old.Spec.Template, path.Child("template"))...)
	}
	return errs
}

var jobStrategy = orphaning(kindStrategy(kindRules[*batchv1.Job]{
	defaults: defaultJob,
	// As upstream, the selector is generated while validating a new
	// Job: it needs the UID, which is set by then.
	validate: func(job *batchv1.Job) field.ErrorList {
		generateJobSelector(job)
		return validateJob(job)
	},
	validateUpdate: validateJobUpdate,
}))

var jobPrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		column("Status", "string", "Status of the job.", 0),
		column("Completions", "string", batchv1.JobStatus{}.SwaggerDoc()["succeeded"], 0),
		column("Duration", "string", "Time required to complete the job.", 0),
		rest.AgeColumn, containersColumn, imagesColumn, selectorColumn,
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
