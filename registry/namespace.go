package registry

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
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// terminateNamespace is the namespaces' gracefulDelete: ns is a copy of
// the stored namespace, which it may mark.
func terminateNamespace(obj runtime.Object, now time.Time) DeleteAction {
	ns := obj.(*corev1.Namespace)
	switch {
	case len(ns.Spec.Finalizers) == 0:
		return DeleteNow
	case ns.DeletionTimestamp != nil:
		return DeleteWait
	}
	stamp := metav1.NewTime(now)
	ns.DeletionTimestamp = &stamp
	ns.Status.Phase = corev1.NamespaceTerminating
	return DeleteMark
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

// markForDeletion stores marked, the stored object changed by the
// strategy's gracefulDelete, with a compare-and-swap on the revision it was
// read at. The key keeps its etcd lease, if any. A lost race returns the
// fresh state to decide again on.
func (s *Store) markForDeletion(ctx context.Context, res *Resource, key string, state *storedState, marked runtime.Object) (runtime.Object, *storedState, error) {
	data, err := s.encode(res, marked)
	if err != nil {
		return nil, nil, err
	}
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", state.rev)).
		Then(clientv3.OpPut(key, string(data), clientv3.WithIgnoreLease())).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return nil, nil, storageError(err)
	}
	if !resp.Succeeded {
		fresh, err := s.stateFrom(res, resp.Responses[0].GetResponseRange().Kvs)
		return nil, fresh, err
	}
	out, err := s.decode(res, data, resp.Header.Revision)
	return out, nil, err
}

// deleteDuringUpdate removes the key an update was about to write, with a
// compare-and-swap on the revision the update read, and returns the
// update's result (data, encoded) stamped with the deletion's revision.
func (s *Store) deleteDuringUpdate(ctx context.Context, res *Resource, key string, state *storedState, data []byte) (runtime.Object, *storedState, error) {
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", state.rev)).
		Then(clientv3.OpDelete(key)).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return nil, nil, storageError(err)
	}
	if !resp.Succeeded {
		fresh, err := s.stateFrom(res, resp.Responses[0].GetResponseRange().Kvs)
		return nil, fresh, err
	}
	s.log.Debug("update removed the last finalizer: deleted", "key", key)
	out, err := s.decode(res, data, resp.Header.Revision)
	return out, nil, err
}

// finalizeNamespace is the namespaces' finalize subresource: an update of
// spec.finalizers that keeps the stored status (upstream's
// namespaceFinalizeStrategy).
func finalizeNamespace(obj, old runtime.Object) {
	obj.(*corev1.Namespace).Status = old.(*corev1.Namespace).Status
}
