package kinds

// ReplicationControllers: the legacy workload, defaulted and scaled like a
// ReplicaSet; deleting one orphans its pods by default, as upstream.

import (
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// replicationControllersEntry describes the replicationcontrollers resource (core/v1 ReplicationController).
func replicationControllersEntry() *registry.Resource {
	return entry(apigroups.CoreV1, "replicationcontrollers", "ReplicationController", true, "/registry/controllers",
		func() runtime.Object { return &corev1.ReplicationController{} }, func() runtime.Object { return &corev1.ReplicationControllerList{} },
		&registry.Resource{ShortNames: []string{"rc"}, Categories: []string{"all"}, Strategy: replicationControllerStrategy,
			Subresources: statusAndScale, Scale: replicationControllerScale, Printer: replicationControllerPrinter,
			SelectableFields: func(obj runtime.Object) fields.Set {
				return replicasField(obj.(*corev1.ReplicationController).Status.Replicas)
			}})
}

// defaultReplicationController: the selector and the object's labels are
// the template's labels when not given; 1 replica.
func defaultReplicationController(rc *corev1.ReplicationController) {
	if t := rc.Spec.Template; t != nil && t.Labels != nil {
		if len(rc.Spec.Selector) == 0 {
			rc.Spec.Selector = t.Labels
		}
		if len(rc.Labels) == 0 {
			rc.Labels = t.Labels
		}
	}
	defaultInt32(&rc.Spec.Replicas, 1)
	defaultPodTemplate(rc.Spec.Template)
}

func validateReplicationController(rc *corev1.ReplicationController) field.ErrorList {
	path := field.NewPath("spec")
	errs := validateNonNegative(rc.Spec.Replicas, path.Child("replicas"))
	if len(rc.Spec.Selector) == 0 {
		errs = append(errs, field.Required(path.Child("selector"), ""))
	}
	errs = append(errs, metav1validation.ValidateLabels(rc.Spec.Selector, path.Child("selector"))...)
	sel := labels.SelectorFromSet(rc.Spec.Selector)
	return append(errs, validateTemplate(rc.Spec.Template, sel, path.Child("template"), corev1.RestartPolicyAlways)...)
}

// As upstream, deleting a ReplicationController or a Job orphans its
// pods unless the client asks otherwise (the legacy default).
var replicationControllerStrategy = orphaning(kindStrategy(kindRules[*corev1.ReplicationController]{
	defaults: defaultReplicationController, validate: validateReplicationController,
}))

var replicationControllerPrinter = rest.TypedPrinter(replicaColumns, func(rc *corev1.ReplicationController, now time.Time) metav1.TableRow {
	var containers, images string
	if rc.Spec.Template != nil {
		containers, images = containersAndImages(&rc.Spec.Template.Spec)
	}
	return metav1.TableRow{Cells: []any{
		rc.Name, replicasOf(rc.Spec.Replicas), int64(rc.Status.Replicas), int64(rc.Status.ReadyReplicas),
		age(rc.CreationTimestamp.Time, now), containers, images, labels.FormatLabels(rc.Spec.Selector),
	}}
})

// replicationControllerScale is the ReplicationControllers' scale subresource.
var replicationControllerScale = replicaScale(func(o *corev1.ReplicationController) (**int32, int32, string) {
	return &o.Spec.Replicas, o.Status.Replicas, labels.SelectorFromSet(o.Spec.Selector).String()
})
