// Package registry stores Kubernetes objects in etcd exactly as
// kube-apiserver does, and answers GET, LIST, WATCH, CREATE, UPDATE and
// DELETE from etcd directly. Each object is one etcd key,
// "/registry/<resource>/<namespace>/<name>" ("/registry/minions/<name>" for
// nodes), whose value is the object encoded as protobuf behind the 4-byte
// magic "k8s\x00" (or JSON, if chosen). etcd keeps a revision counter that
// every write increments; a key remembers the revision that created it and
// the one that last modified it. The object's resourceVersion is that mod
// revision, and writes are compare-and-swap transactions on it: this is how
// Kubernetes gets optimistic concurrency, ordered watches and consistent
// paged lists out of etcd without a single lock. It makes these
// mechanisms tangible: storage layout and opaque bytes (M2), resourceVersion =
// mod revision and 409 on a stale update (M4), and, by showing where a
// resourceVersion comes from, why comparing the versions of two different
// objects means nothing (M7).
//
// # How each verb maps to etcd
//
//   - CREATE: Txn If(CreateRevision(key) == 0) Then(Put). Loses to a
//     concurrent create with 409 AlreadyExists. Whether the namespace
//     exists is admission's business (the apiserver's NamespaceLifecycle),
//     as upstream: the Store writes where it is told.
//   - UPDATE: Get at revision R, compute the new object, then Txn
//     If(ModRevision(key) == R) Then(Put) Else(Get). A lost race loops with
//     the fresh state; a client that sent resourceVersion R' != R gets 409
//     Conflict. Identical bytes are not written. Every update and delete
//     goes through the one compare-and-swap helper (cas.go).
//   - DELETE: the same transaction with Delete, after checking the UID and
//     resourceVersion preconditions against exactly the state deleted. An
//     object of any kind with metadata.finalizers (or one the propagation
//     policy adds: "orphan", "foregroundDeletion") is not deleted but
//     marked: the same transaction with a Put of the object stamped with
//     deletionTimestamp, and the update that removes its last finalizer
//     deletes it instead of writing it (rest/deletion.go). Pods are deleted
//     gracefully: marked with deletionTimestamp = now + grace until their
//     kubelet deletes them with grace 0. A namespace is marked Terminating
//     first and removed by the finalize update that takes away its last
//     finalizer (its Strategy's GracefulDelete, package kinds).
//   - GET and LIST: range reads; "" is linearizable, "0" serializable, "N"
//     must see revision N or later (else 504 "Too large resource version"),
//     Exact N reads the past at revision N (410 once compacted). Pages are
//     read at the first page's revision, carried in upstream's continue token.
//   - WATCH: one etcd watch on the key prefix from revision RV+1, with the
//     previous value of each key (to send DELETED objects and to evaluate
//     selectors on the old state) and progress notifications (BOOKMARKs).
//
// Events are bound to an etcd lease so that etcd deletes them after
// Options.EventTTL, as with kube-apiserver's --event-ttl; leases are shared
// by the writes of a short window, as upstream's lease manager does (see
// lease.go). Keys that Options.KeyTTL gives a TTL (minicp's Node Leases,
// M12) each get an etcd lease of their own: every write
// reuses it and sends one KeepAlive, so the key vanishes TTL after its last
// write (see keylease.go).
//
// # Invariants
//
//   - resourceVersion <-> revision conversions happen only in revision.go;
//     a stored value never carries a resourceVersion.
//   - Every write is one etcd transaction guarded by a revision compare; a
//     write that fails leaves etcd unchanged.
//   - Every error returned is a *apierrors.StatusError with upstream's code,
//     reason and message; etcd errors are translated only in errors.go.
//   - A watch delivers, in revision order and exactly once, every change
//     under its prefix after its start revision, or an ERROR event and the
//     end of the stream. Its goroutine ends, and its result channel is
//     closed, when its context ends or Stop is called, whether or not the
//     consumer reads.
//
// # One descriptor per resource
//
// Everything that makes a resource different from another is one field of
// its Resource (resource.go): names and scope, etcd key prefix, storage
// media type, TTL policy (events' leases), Strategy, selectable fields,
// watch cache indexes and window, subresources, scale, printer columns,
// create-on-update, collection delete. The built-in kinds' descriptors are
// package kinds' (kinds.Builtin); NewTable checks a set of them and makes the
// Table that one running stack hands to its Store, its watch cache and
// its apiserver. The table's set changes at run time, when custom
// resources come and go (package crd): each state is an immutable
// snapshot that Table.Change swaps in whole, readers never lock, and
// subscribers (the watch cache, discovery, OpenAPI) hear of every change
// in order until they unsubscribe (table.go states who may see what
// mid-change). A Resource
// itself never changes once in a table; the field managers the apiserver
// derives from it are kept in it (Resource.FieldManager), so they go away
// with it. This package keeps no list of resources of its own, and decides
// nothing by comparing resource names: what differs is read from the
// descriptor.
//
// A Strategy (package rest, upstream's registry/rest) holds what differs between resources' writes:
// defaulting (a pod gets restartPolicy Always, a QoS class, ...),
// validation (422 Invalid with field causes) and which parts an update may
// change (a status update keeps the spec, a main update keeps the status).
// Printers are the columns `kubectl get` shows, after upstream's
// (rest/printer.go: the default one and the helpers kinds' printers are built
// with). A resource's TypeConverter (package typeconverter)
// is what the apiserver's field manager types its objects with for
// managedFields and server-side apply; the registry never computes
// managedFields itself, it stores them as part of the object.
//
// A kind whose writes take something kept outside its objects (a
// Service's ClusterIP and NodePorts, package kinds) does it in its
// Strategy's write hooks, BeginWrite and AfterDelete (hooks.go): the Store
// calls them after validation and before the etcd write, tells them
// whether the write happened so they can give back what it did not use,
// and calls AfterDelete once an object is gone. The Store knows nothing
// of Services. events.k8s.io/v1 Events are core/v1 Events stored at the
// same keys, converted by their storage codec (Resource.StoredAs,
// stored_form.go).
//
// Every etcd request goes through one client wrapper (etcdclient.go): it
// sends the keys of resources moved by Options.EtcdOverrides (events, as
// kube-apiserver's --etcd-servers-overrides) to their own cluster, passes
// Options.Faults first (the triage labs' slow etcd), and times each request
// into etcd_request_duration_seconds{operation,type} and the request's
// trace (package reqtrace): M15's "is etcd slow, as the
// apiserver sees it?" (metrics.go).
//
// The watch cache (package watchcache) implements Interface too and serves
// reads from memory; writes always come here. Labs: docs/labs (storage
// layout with `minictl etcd get`, stale updates, compaction and 410).
package registry
