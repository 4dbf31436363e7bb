// Package crd is the CRD controller: a client of the API, like the
// namespace controller, that moves every CustomResourceDefinition through
// the conditions its users wait for, as upstream's naming, establishing
// and finalizer controllers do together.
//
//   - NamesAccepted: the names a CRD asks for (spec.names) are accepted
//     into status.acceptedNames unless another CRD of the same group
//     already accepted one of them (plural, singular and short names
//     share one space, kind and list kind another); a conflicting name is
//     left out, and the condition is False with the reason naming it
//     (PluralConflict, KindConflict, ...). When a CRD goes or changes its
//     names, the other CRDs of its group are looked at again.
//   - Established: True once the names are accepted. The apiserver serves
//     a CRD's custom resources from then on (package crd's Serving), so
//     `kubectl wait --for=condition=Established crd/<name>` is the signal
//     that the resources can be used.
//   - Deletion: a deleted CRD stays, Terminating, while it carries the
//     customresourcecleanup.apiextensions.k8s.io finalizer (the apiserver
//     adds it on the first DELETE); the controller deletes every custom
//     resource of the CRD, waits until none is left, then removes the
//     finalizer, and the apiserver deletes the CRD; Serving then takes its
//     resources out of discovery and their watch cache away.
//
// # Goroutines and invariants
//
// Run owns an informer over CRDs and a work queue of CRD names; worker
// goroutines take names from the queue, and every name is synced by one
// worker at a time (the queue's guarantee). A sync reads the CRD from the
// informer, decides from it alone, and writes through the API with the
// resourceVersion it read: a conflict re-queues the name and the next sync
// sees the newer state. Nothing is kept between syncs.
package crd
