package kinds

// Namespace deletion as a real cluster does it (M1: the
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
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"minicp/registry"
)

// terminateNamespace is the namespaces' gracefulDelete: ns is a copy of
// the stored namespace, which it may mark.
func terminateNamespace(obj runtime.Object, now time.Time) registry.DeleteAction {
	ns := obj.(*corev1.Namespace)
	switch {
	case len(ns.Spec.Finalizers) == 0:
		return registry.DeleteNow
	case ns.DeletionTimestamp != nil:
		return registry.DeleteWait
	}
	stamp := metav1.NewTime(now)
	ns.DeletionTimestamp = &stamp
	ns.Status.Phase = corev1.NamespaceTerminating
	return registry.DeleteMark
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
