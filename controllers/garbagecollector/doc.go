// Package garbagecollector deletes objects whose owners are gone, as
// kube-controller-manager's garbage collector does. It is a client of the
// apiserver and nothing else: everything it knows comes from watches, and
// everything it changes goes through DELETE and PATCH requests.
//
// An object names its owners in metadata.ownerReferences (apiVersion,
// kind, name and UID). The collector watches the metadata only
// (as=PartialObjectMetadata, client-go's metadata informers) of every
// resource discovery lists as listable, watchable and deletable but those
// in Config.IgnoredResources (the controller manager passes events of both
// groups, as upstream's collector's default list has them), and keeps
// the graph from each owner UID to its dependents (graph.go). A change in
// the graph queues the objects it concerns; workers then act:
//
//   - a dependent whose owners are all gone is deleted, with a UID
//     precondition. Whether an owner is gone is decided by a GET without
//     resourceVersion (a quorum read), never by the graph alone: the graph
//     may be behind, and an owner deleted and recreated under the same
//     name has another UID, so it does not keep the old owner's
//     dependents;
//   - an owner being deleted with the "orphan" finalizer (propagationPolicy
//     Orphan) has its reference removed from every dependent, then loses
//     the finalizer, which deletes it;
//   - an owner being deleted with the "foregroundDeletion" finalizer
//     (Foreground) has its dependents deleted (in foreground too), and
//     loses the finalizer once no dependent with blockOwnerDeletion is
//     left.
//
// Background, the default of most kinds, needs no finalizer: the owner is
// deleted at once and its dependents are collected when the collector sees
// the owner's DELETED event. Every dependent costs its own DELETE: a
// cascade over N dependents is N etcd writes and N watch events (the lab,
// docs/labs/15-garbage-collection.md, counts them).
//
// An owner reference that cannot hold in the dependent's namespace gets
// upstream's Warning event OwnerRefInvalidNamespace on the dependent
// (source garbage-collector-controller, through Config.Recorder): an owner
// the graph knows in another namespace counts as gone, so the dependent
// is collected; a namespaced owner named by a cluster-scoped object cannot
// be resolved, so the object is never collected.
//
// # Invariants
//
//   - The graph is only a map for finding dependents; every decision to
//     delete or orphan is made on a quorum read of the owner, and every
//     write carries a precondition (UID on DELETE, resourceVersion on
//     PATCH), so a stale graph can delay the collector but not make it
//     delete the wrong object.
//   - graph.mu is never held across an API request.
//   - Run owns every goroutine it starts (informers, workers) and returns
//     after they have stopped; its HTTP client's idle connections are
//     closed on the way out.
//
// Discovery is read again every ResyncPeriod (30 s, as upstream), so that
// resources served later (custom resources) are watched too.
//
// Where minicp differs from upstream: there are no
// virtual nodes for owners never seen (a quorum read answers instead); one
// work queue instead of three (its workqueue_* series, upstream's names,
// carry name="garbage_collector_attempt_to_delete"); and the metrics
// besides garbagecollector_controller_resources_sync_error_total are
// minicp's own, to count what a cascade costs.
package garbagecollector
