package kinds

// ReplicaSets (apps/v1): upstream's defaults, validation and columns.

import (
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// replicaSetsEntry describes the replicasets resource (apps/v1 ReplicaSet).
func replicaSetsEntry() *registry.Resource {
	return entry(apigroups.AppsV1, "replicasets", "ReplicaSet", true, "/registry/replicasets",
		func() runtime.Object { return &appsv1.ReplicaSet{} }, func() runtime.Object { return &appsv1.ReplicaSetList{} },
		&registry.Resource{ShortNames: []string{"rs"}, Categories: []string{"all"}, Strategy: replicaSetStrategy,
			Subresources: statusAndScale, Scale: replicaSetScale, Printer: replicaSetPrinter,
			SelectableFields: func(obj runtime.Object) fields.Set {
				return replicasField(obj.(*appsv1.ReplicaSet).Status.Replicas)
			}})
}

func defaultReplicaSet(rs *appsv1.ReplicaSet) {
	defaultInt32(&rs.Spec.Replicas, 1)
	defaultPodTemplate(&rs.Spec.Template)
}

func validateReplicaSet(rs *appsv1.ReplicaSet) field.ErrorList {
	path := field.NewPath("spec")
	errs := validateNonNegative(rs.Spec.Replicas, path.Child("replicas"))
	sel, selErrs := validateWorkloadSelector(rs.Spec.Selector, path.Child("selector"))
	errs = append(errs, selErrs...)
	return append(errs, validateTemplate(&rs.Spec.Template, sel, path.Child("template"), corev1.RestartPolicyAlways)...)
}

var replicaSetStrategy = kindStrategy(kindRules[*appsv1.ReplicaSet]{
	defaults: defaultReplicaSet, validate: validateReplicaSet,
	validateUpdate: func(rs, old *appsv1.ReplicaSet) field.ErrorList {
		return validateSelectorUnchanged(rs.Spec.Selector, old.Spec.Selector)
	},
})

var replicaSetPrinter = rest.TypedPrinter(replicaColumns, func(rs *appsv1.ReplicaSet, now time.Time) metav1.TableRow {
	containers, images := containersAndImages(&rs.Spec.Template.Spec)
	return metav1.TableRow{Cells: []any{
		rs.Name, replicasOf(rs.Spec.Replicas), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas),
		age(rs.CreationTimestamp.Time, now), containers, images, selectorString(rs.Spec.Selector),
	}}
})

// replicaSetScale is the ReplicaSets' scale subresource.
var replicaSetScale = replicaScale(func(o *appsv1.ReplicaSet) (**int32, int32, string) {
	return &o.Spec.Replicas, o.Status.Replicas, labelSelectorString(o.Spec.Selector)
})
