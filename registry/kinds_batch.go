package registry

// Jobs and CronJobs: upstream's batch/v1 defaults, the selector a Job gets
// from its UID, and the main rules of upstream's validation.

import (
	"math"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

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

// Labels upstream's Job strategy puts on a Job's selector and template.
const (
	jobControllerUIDLabel       = "batch.kubernetes.io/controller-uid"
	jobNameLabel                = "batch.kubernetes.io/job-name"
	legacyJobControllerUIDLabel = "controller-uid"
	legacyJobNameLabel          = "job-name"
)

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

// defaultCronJob: Allow concurrent runs, not suspended, 3 successful and 1
// failed Job kept.
func defaultCronJob(cj *batchv1.CronJob) {
	spec := &cj.Spec
	if spec.ConcurrencyPolicy == "" {
		spec.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if spec.Suspend == nil {
		suspend := false
		spec.Suspend = &suspend
	}
	defaultInt32(&spec.SuccessfulJobsHistoryLimit, 3)
	defaultInt32(&spec.FailedJobsHistoryLimit, 1)
	defaultPodSpec(&spec.JobTemplate.Spec.Template.Spec)
}

// cronJobMaxNameLength leaves room for the suffix of the Jobs it creates.
const cronJobMaxNameLength = 52

func validateCronJob(cj *batchv1.CronJob) field.ErrorList {
	spec, path := &cj.Spec, field.NewPath("spec")
	var errs field.ErrorList
	if len(cj.Name) > cronJobMaxNameLength {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), cj.Name, "must be no more than 52 characters"))
	}
	errs = append(errs, validateSchedule(spec.Schedule, path.Child("schedule"))...)
	policies := []batchv1.ConcurrencyPolicy{batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent}
	if !contains(policies, spec.ConcurrencyPolicy) {
		errs = append(errs, field.NotSupported(path.Child("concurrencyPolicy"), spec.ConcurrencyPolicy, policies))
	}
	errs = append(errs, validateNonNegative(spec.SuccessfulJobsHistoryLimit, path.Child("successfulJobsHistoryLimit"))...)
	errs = append(errs, validateNonNegative(spec.FailedJobsHistoryLimit, path.Child("failedJobsHistoryLimit"))...)
	tmpl := path.Child("jobTemplate", "spec", "template")
	return append(errs, validateTemplate(&spec.JobTemplate.Spec.Template, nil, tmpl, jobRestartPolicies...)...)
}

// cronDescriptors are the schedules that stand for a whole cron line.
var cronDescriptors = []string{"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}

// validateSchedule checks the shape of a cron schedule: five fields, a
// descriptor or "@every <duration>". minicp runs no CronJob controller, so
// it does not parse the fields further.
func validateSchedule(schedule string, path *field.Path) field.ErrorList {
	if schedule == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	if strings.Contains(schedule, "TZ") {
		return field.ErrorList{field.Invalid(path, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead")}
	}
	s := strings.TrimSpace(schedule)
	if contains(cronDescriptors, s) || strings.HasPrefix(s, "@every ") || len(strings.Fields(s)) == 5 {
		return nil
	}
	return field.ErrorList{field.Invalid(path, schedule, "unparseable schedule: expected exactly 5 fields or a descriptor such as @hourly")}
}
