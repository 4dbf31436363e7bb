package kinds

// Namespaces, nodes, config maps, events and leases: their defaulting,
// create/update rules and validation, each a small part of upstream's.

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minicp/registry"
)

// namespaceStrategy: a new namespace is Active, labelled with its name and
// carries the "kubernetes" finalizer; DELETE makes it Terminating, and the
// finalize update that removes its last finalizer deletes it (namespace.go).
var namespaceStrategy = &registry.Strategy{
	ValidateName: validation.ValidateNamespaceName,
	PrepareForCreate: func(obj runtime.Object) {
		ns := obj.(*corev1.Namespace)
		ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
		addKubernetesFinalizer(ns)
	},
	PrepareForFinalize: finalizeNamespace,
	GracefulDelete:     terminateNamespace,
	DeleteDuringUpdate: namespaceFinished,
	PrepareForUpdate: func(obj, old runtime.Object) {
		ns, oldNS := obj.(*corev1.Namespace), old.(*corev1.Namespace)
		ns.Spec.Finalizers = oldNS.Spec.Finalizers
		ns.Status = oldNS.Status
	},
	PrepareForStatusUpdate: func(obj, old runtime.Object) {
		obj.(*corev1.Namespace).Spec = old.(*corev1.Namespace).Spec
	},
	Canonicalize: func(obj runtime.Object) {
		ns := obj.(*corev1.Namespace)
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[corev1.LabelMetadataName] = ns.Name
	},
}

// nodeStrategy: a kubelet registers its node with a status, so create keeps
// it; a main update keeps the stored status, a status update the spec.
var nodeStrategy = &registry.Strategy{
	ValidateName:     validation.NameIsDNSSubdomain,
	PrepareForCreate: func(obj runtime.Object) { defaultNodeStatus(&obj.(*corev1.Node).Status) },
	PrepareForUpdate: func(obj, old runtime.Object) {
		obj.(*corev1.Node).Status = old.(*corev1.Node).Status
	},
	PrepareForStatusUpdate: func(obj, old runtime.Object) {
		node := obj.(*corev1.Node)
		node.Spec = old.(*corev1.Node).Spec
		defaultNodeStatus(&node.Status)
	},
	Validate: func(obj runtime.Object) field.ErrorList { return validateTaints(obj.(*corev1.Node).Spec.Taints) },
}

// defaultNodeStatus makes allocatable default to capacity, as upstream.
func defaultNodeStatus(status *corev1.NodeStatus) {
	if len(status.Allocatable) == 0 && len(status.Capacity) > 0 {
		status.Allocatable = status.Capacity.DeepCopy()
	}
}

func validateTaints(taints []corev1.Taint) field.ErrorList {
	var errs field.ErrorList
	effects := []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}
	for i, t := range taints {
		p := field.NewPath("spec", "taints").Index(i)
		for _, msg := range utilvalidation.IsQualifiedName(t.Key) {
			errs = append(errs, field.Invalid(p.Child("key"), t.Key, msg))
		}
		if !contains(effects, t.Effect) {
			errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, effects))
		}
	}
	return errs
}

// configMapMaxBytes is upstream's limit on a config map's data (1 MiB).
const configMapMaxBytes = 1024 * 1024

var configMapStrategy = &registry.Strategy{
	ValidateName: validation.NameIsDNSSubdomain,
	Validate: func(obj runtime.Object) field.ErrorList {
		cm := obj.(*corev1.ConfigMap)
		var errs field.ErrorList
		total := 0
		for key, value := range cm.Data {
			for _, msg := range utilvalidation.IsConfigMapKey(key) {
				errs = append(errs, field.Invalid(field.NewPath("data").Key(key), key, msg))
			}
			if _, dup := cm.BinaryData[key]; dup {
				errs = append(errs, field.Invalid(field.NewPath("data").Key(key), key, "duplicate of key present in binaryData"))
			}
			total += len(value)
		}
		for key, value := range cm.BinaryData {
			for _, msg := range utilvalidation.IsConfigMapKey(key) {
				errs = append(errs, field.Invalid(field.NewPath("binaryData").Key(key), key, msg))
			}
			total += len(value)
		}
		if total > configMapMaxBytes {
			errs = append(errs, field.TooLong(field.NewPath(""), "", configMapMaxBytes))
		}
		return errs
	},
}

// eventStrategy: minicp requires the involved object's kind and name, and,
// as upstream, an event about a namespaced object lives in its namespace
// (about a cluster-scoped one, in "default" or no namespace).
var eventStrategy = &registry.Strategy{
	ValidateName: validation.NameIsDNSSubdomain,
	Validate: func(obj runtime.Object) field.ErrorList {
		ev := obj.(*corev1.Event)
		var errs field.ErrorList
		p := field.NewPath("involvedObject")
		if ev.InvolvedObject.Kind == "" {
			errs = append(errs, field.Required(p.Child("kind"), ""))
		}
		if ev.InvolvedObject.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
		ns := ev.InvolvedObject.Namespace
		if (ns == "" && ev.Namespace != metav1.NamespaceNone && ev.Namespace != metav1.NamespaceDefault) ||
			(ns != "" && ns != ev.Namespace) {
			errs = append(errs, field.Invalid(p.Child("namespace"), ns, "does not match event.namespace"))
		}
		return errs
	},
}

var leaseStrategy = &registry.Strategy{
	ValidateName: validation.NameIsDNSSubdomain,
	Validate: func(obj runtime.Object) field.ErrorList {
		spec := obj.(*coordinationv1.Lease).Spec
		var errs field.ErrorList
		p := field.NewPath("spec")
		if d := spec.LeaseDurationSeconds; d != nil && *d <= 0 {
			errs = append(errs, field.Invalid(p.Child("leaseDurationSeconds"), *d, "must be greater than 0"))
		}
		if n := spec.LeaseTransitions; n != nil && *n < 0 {
			errs = append(errs, field.Invalid(p.Child("leaseTransitions"), *n, "must be greater than or equal to 0"))
		}
		return errs
	},
}
