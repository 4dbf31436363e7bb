package kinds

// CronJobs (batch/v1): upstream's defaults, schedule and time zone rules,
// and columns.

import (
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"regexp"
	"strings"
	"time"
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// cronJobsEntry describes the cronjobs resource (batch/v1 CronJob).
func cronJobsEntry() *registry.Resource {
	return entry(apigroups.BatchV1, "cronjobs", "CronJob", true, "/registry/cronjobs",
		func() runtime.Object { return &batchv1.CronJob{} }, func() runtime.Object { return &batchv1.CronJobList{} },
		&registry.Resource{ShortNames: []string{"cj"}, Categories: []string{"all"}, Strategy: cronJobStrategy,
			Subresources: []string{"status"}, Printer: cronJobPrinter})
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

var cronJobStrategy = func() *rest.Strategy {
	st := kindStrategy(kindRules[*batchv1.CronJob]{
		defaults: defaultCronJob, validate: validateCronJob, validateUpdate: func(cj, old *batchv1.CronJob) field.ErrorList {
			return validateScheduleTimeZone(cj, old)
		},
	})
	st.ValidateCreate = func(obj runtime.Object) field.ErrorList { return validateScheduleTimeZone(obj.(*batchv1.CronJob), nil) }
	return st
}()

var cronJobPrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		column("Schedule", "string", batchv1.CronJobSpec{}.SwaggerDoc()["schedule"], 0),
		column("Timezone", "string", batchv1.CronJobSpec{}.SwaggerDoc()["timeZone"], 0),
		column("Suspend", "boolean", batchv1.CronJobSpec{}.SwaggerDoc()["suspend"], 0),
		column("Active", "integer", batchv1.CronJobStatus{}.SwaggerDoc()["active"], 0),
		column("Last Schedule", "string", batchv1.CronJobStatus{}.SwaggerDoc()["lastScheduleTime"], 0),
		rest.AgeColumn, containersColumn, imagesColumn, selectorColumn,
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
