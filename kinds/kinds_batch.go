package kinds

// Jobs and CronJobs: upstream's batch/v1 defaults, the selector a Job gets
// from its UID, and the main rules of upstream's validation.

import (
	"math"
	"regexp"
	"strings"
	"time"
	_ "time/tzdata" // CronJob time zones are checked against the same database everywhere

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/robfig/cron/v3"
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
	errs = append(errs, validateTimeZone(spec.TimeZone, path.Child("timeZone"))...)
	policies := []batchv1.ConcurrencyPolicy{batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent}
	if !contains(policies, spec.ConcurrencyPolicy) {
		errs = append(errs, field.NotSupported(path.Child("concurrencyPolicy"), spec.ConcurrencyPolicy, policies))
	}
	errs = append(errs, validateNonNegative(spec.SuccessfulJobsHistoryLimit, path.Child("successfulJobsHistoryLimit"))...)
	errs = append(errs, validateNonNegative(spec.FailedJobsHistoryLimit, path.Child("failedJobsHistoryLimit"))...)
	tmpl := path.Child("jobTemplate", "spec", "template")
	return append(errs, validateTemplate(&spec.JobTemplate.Spec.Template, nil, tmpl, jobRestartPolicies...)...)
}

// validateSchedule parses a schedule as upstream does, with the standard
// cron parser: five fields (minute, hour, day of month, month, day of
// week: numbers, names, ranges, lists, steps), a descriptor such as
// @hourly, or "@every <duration>".
func validateSchedule(schedule string, path *field.Path) field.ErrorList {
	if schedule == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	if _, err := cron.ParseStandard(schedule); err != nil {
		return field.ErrorList{field.Invalid(path, schedule, err.Error())}
	}
	return nil
}

// validateScheduleTimeZone: the time zone belongs in the timeZone field.
// A schedule with TZ= or CRON_TZ= is refused on create; an update of a
// CronJob stored with one before the field existed may keep it, but not
// beside a timeZone.
func validateScheduleTimeZone(cj, old *batchv1.CronJob) field.ErrorList {
	path := field.NewPath("spec", "schedule")
	allowTZ := old != nil && strings.Contains(old.Spec.Schedule, "TZ")
	switch schedule := cj.Spec.Schedule; {
	case allowTZ && strings.Contains(schedule, "TZ") && cj.Spec.TimeZone != nil:
		return field.ErrorList{field.Invalid(path, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule")}
	case !allowTZ && strings.Contains(schedule, "TZ"):
		return field.ErrorList{field.Invalid(path, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead")}
	}
	return nil
}

// validTimeZonePart is what one slash-separated part of a time zone name
// may hold (letters, digits, '.', '-', '_', '+'; 1 to 14 of them).
var validTimeZonePart = regexp.MustCompile(`^[A-Za-z.\-_0-9+]{1,14}$`)

// validateTimeZone: an explicit zone name of the time zone database
// ("Europe/Berlin", "Etc/UTC"), not empty and not Local. The database is
// compiled in (time/tzdata), so the answer does not depend on the host.
func validateTimeZone(tz *string, path *field.Path) field.ErrorList {
	if tz == nil {
		return nil
	}
	if *tz == "" {
		return field.ErrorList{field.Invalid(path, *tz, "timeZone must be nil or non-empty string")}
	}
	for _, part := range strings.Split(*tz, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !validTimeZonePart.MatchString(part) {
			return field.ErrorList{field.Invalid(path, *tz, "unknown time zone "+*tz)}
		}
	}
	if strings.EqualFold(*tz, "Local") {
		return field.ErrorList{field.Invalid(path, *tz, "timeZone must be an explicit time zone name such as Europe/Berlin or Etc/UTC, not Local")}
	}
	if _, err := time.LoadLocation(*tz); err != nil {
		return field.ErrorList{field.Invalid(path, *tz, err.Error())}
	}
	return nil
}
