package kinds

// DaemonSets (apps/v1): upstream's defaults, validation and columns.

import (
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// daemonSetsEntry describes the daemonsets resource (apps/v1 DaemonSet).
func daemonSetsEntry() *registry.Resource {
	return entry(apigroups.AppsV1, "daemonsets", "DaemonSet", true, "/registry/daemonsets",
		func() runtime.Object { return &appsv1.DaemonSet{} }, func() runtime.Object { return &appsv1.DaemonSetList{} },
		&registry.Resource{ShortNames: []string{"ds"}, Categories: []string{"all"}, Strategy: daemonSetStrategy,
			Subresources: []string{"status"}, Printer: daemonSetPrinter})
}

// defaultDaemonSet: RollingUpdate, one pod unavailable at a time and no
// surge, 10 revisions kept.
func defaultDaemonSet(ds *appsv1.DaemonSet) {
	s := &ds.Spec.UpdateStrategy
	if s.Type == "" {
		s.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if s.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if s.RollingUpdate == nil {
			s.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if s.RollingUpdate.MaxUnavailable == nil {
			one := intstr.FromInt32(1)
			s.RollingUpdate.MaxUnavailable = &one
		}
		if s.RollingUpdate.MaxSurge == nil {
			zero := intstr.FromInt32(0)
			s.RollingUpdate.MaxSurge = &zero
		}
	}
	defaultInt32(&ds.Spec.RevisionHistoryLimit, 10)
	defaultPodTemplate(&ds.Spec.Template)
}

func validateDaemonSet(ds *appsv1.DaemonSet) field.ErrorList {
	spec, path := &ds.Spec, field.NewPath("spec")
	sel, errs := validateWorkloadSelector(spec.Selector, path.Child("selector"))
	errs = append(errs, validateTemplate(&spec.Template, sel, path.Child("template"), corev1.RestartPolicyAlways)...)
	s := &spec.UpdateStrategy
	switch s.Type {
	case appsv1.OnDeleteDaemonSetStrategyType:
	case appsv1.RollingUpdateDaemonSetStrategyType:
		if s.RollingUpdate == nil {
			errs = append(errs, field.Required(path.Child("updateStrategy", "rollingUpdate"), ""))
			break
		}
		errs = append(errs, validateSurge(s.RollingUpdate.MaxUnavailable, s.RollingUpdate.MaxSurge, path.Child("updateStrategy", "rollingUpdate"))...)
	default:
		errs = append(errs, field.NotSupported(path.Child("updateStrategy", "type"), s.Type,
			[]appsv1.DaemonSetUpdateStrategyType{appsv1.OnDeleteDaemonSetStrategyType, appsv1.RollingUpdateDaemonSetStrategyType}))
	}
	return errs
}

var daemonSetStrategy = kindStrategy(kindRules[*appsv1.DaemonSet]{
	defaults: defaultDaemonSet, validate: validateDaemonSet,
	validateUpdate: func(ds, old *appsv1.DaemonSet) field.ErrorList {
		return validateSelectorUnchanged(ds.Spec.Selector, old.Spec.Selector)
	},
})

var daemonSetPrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		column("Desired", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["desiredNumberScheduled"], 0),
		column("Current", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["currentNumberScheduled"], 0),
		column("Ready", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["numberReady"], 0),
		column("Up-to-date", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["updatedNumberScheduled"], 0),
		column("Available", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["numberAvailable"], 0),
		column("Node Selector", "string", corev1.PodSpec{}.SwaggerDoc()["nodeSelector"], 0),
		rest.AgeColumn, containersColumn, imagesColumn, selectorColumn,
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
