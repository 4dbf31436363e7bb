package kinds

// Namespaces, and their deletion as a real cluster does it (M1: the
// apiserver and its controllers, not etcd, give objects their lifecycle):
//
//  1. A new namespace gets the "kubernetes" finalizer in spec.finalizers.
//  2. DELETE does not remove the key: it stamps metadata.deletionTimestamp,
//     sets status.phase Terminating and stores that. From then on the
//     NamespaceLifecycle admission plugin refuses new objects in it.
//  3. The namespace controller (package namespace) deletes everything in
//     the namespace, then removes its finalizer with
//     PUT /api/v1/namespaces/<name>/finalize.
//  4. The update that leaves a terminating namespace without finalizers
//     deletes its key instead of writing it ("delete during update"), and
//     watchers see DELETED.
//
// A DELETE of a terminating namespace whose finalizers are all gone removes
// it at once; one that still has finalizers changes nothing. A namespace
// without finalizers when first deleted (one stored before minicp added
// them) is removed at once too: no controller would ever finalize it.

import (
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
)

// namespacesEntry describes the namespaces resource (core/v1 Namespace).
// As upstream, a collection of namespaces cannot be deleted at once.
func namespacesEntry() *registry.Resource {
	return withoutDeleteCollection(entry(apigroups.CoreV1, "namespaces", "Namespace", false, "/registry/namespaces",
		func() runtime.Object { return &corev1.Namespace{} }, func() runtime.Object { return &corev1.NamespaceList{} },
		&registry.Resource{ShortNames: []string{"ns"}, Strategy: namespaceStrategy, Subresources: []string{"status", "finalize"},
			Printer: namespacePrinter, SelectableFields: func(obj runtime.Object) fields.Set {
				return fields.Set{"status.phase": string(obj.(*corev1.Namespace).Status.Phase)}
			}}))
}

// terminateNamespace is the namespaces' gracefulDelete: ns is a copy of
// the stored namespace, which it may mark.
func terminateNamespace(obj runtime.Object, now time.Time) rest.DeleteAction {
	ns := obj.(*corev1.Namespace)
	switch {
	case len(ns.Spec.Finalizers) == 0:
		return rest.DeleteNow
	case ns.DeletionTimestamp != nil:
		return rest.DeleteWait
	}
	stamp := metav1.NewTime(now)
	ns.DeletionTimestamp = &stamp
	ns.Status.Phase = corev1.NamespaceTerminating
	return rest.DeleteMark
}

// namespaceFinished is the namespaces' deleteDuringUpdate: a terminating
// namespace left without finalizers, in spec and metadata, is deleted by
// the update that removed the last one (upstream's
// ShouldDeleteNamespaceDuringUpdate).
func namespaceFinished(obj, old runtime.Object) bool {
	ns, oldNS := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	return oldNS.DeletionTimestamp != nil && len(ns.Spec.Finalizers) == 0 && len(ns.Finalizers) == 0
}

// addKubernetesFinalizer gives a new namespace the finalizer the namespace
// controller removes once the namespace is empty.
func addKubernetesFinalizer(ns *corev1.Namespace) {
	for _, f := range ns.Spec.Finalizers {
		if f == corev1.FinalizerKubernetes {
			return
		}
	}
	ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
}

// finalizeNamespace is the namespaces' finalize subresource: an update of
// spec.finalizers that keeps the stored status (upstream's
// namespaceFinalizeStrategy).
func finalizeNamespace(obj, old runtime.Object) {
	obj.(*corev1.Namespace).Status = old.(*corev1.Namespace).Status
}

var namespacePrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		{Name: "Status", Type: "string", Description: "The status of the namespace"},
		rest.AgeColumn,
	},
	func(ns *corev1.Namespace, now time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{ns.Name, string(ns.Status.Phase), age(ns.CreationTimestamp.Time, now)}}
	},
)

// namespaceStrategy: a new namespace is Active, labelled with its name and
// carries the "kubernetes" finalizer; DELETE makes it Terminating, and the
// finalize update that removes its last finalizer deletes it.
var namespaceStrategy = &rest.Strategy{
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
