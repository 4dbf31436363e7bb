// Package namespace is minicp's namespace controller: the part of
// kube-controller-manager that makes `kubectl delete namespace` finish.
//
// Deleting a namespace is a conversation between the apiserver and this
// controller (M1: clients, not etcd, give objects their
// lifecycle; every step below is an ordinary API request):
//
//  1. DELETE /api/v1/namespaces/lab: the apiserver stamps the namespace's
//     deletionTimestamp, sets status.phase Terminating and keeps it; its
//     NamespaceLifecycle admission now refuses new objects in it.
//  2. The controller's informer sees the change. For every namespaced
//     resource discovery lists (pods, config maps, events, leases, ...)
//     it lists the namespace's objects and deletes them.
//  3. When a fresh list finds nothing left, it removes its "kubernetes"
//     finalizer with PUT /api/v1/namespaces/lab/finalize, and the
//     apiserver deletes the namespace: watchers see DELETED.
//
// In test environments without this controller (envtest, a bare
// kube-apiserver), a deleted namespace stays Terminating forever; minicp
// runs it in-process, so namespaces go away as on a real cluster.
//
// Events: upstream's namespace controller records none (what it finds is
// written into the namespace's status conditions instead), and neither
// does this one; `kubectl get events` stays quiet about a namespace's
// deletion on a real cluster too.
//
// Invariants:
//
//   - The controller acts only on namespaces with a deletionTimestamp and
//     the "kubernetes" finalizer, and finalizes only after a list of every
//     namespaced resource came back empty.
//   - A namespace that still has content is retried with backoff (an
//     object created just before admission saw Terminating is swept on
//     the next pass).
//   - Run returns only after its informer and workers have stopped.
package namespace
