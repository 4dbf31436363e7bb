// Package controlplane assembles minicp's pieces into one running control
// plane: an etcd (embedded, or an existing cluster named by --etcd-servers),
// the etcd-backed registry, and the apiserver in front of it.
//
// It is the layering of M1 (docs/MECHANISMS.md) made concrete, in start-up order:
//
//	etcd  <-  registry (keys, codec, resourceVersion = mod revision)  <-  apiserver (HTTP)
//
// Both cmd/minicp and e2e/framework start the stack through Start, so a test
// runs exactly what a learner runs.
//
// Beside the request path it runs the apiserver's etcd compactor every
// --etcd-compaction-interval (compaction.go), and its readiness check fails
// while etcd has an alarm raised, naming it (alarms.go). RestoreSnapshot
// (restore.go) lays a restored etcd member out where Start looks for it.
//
// Once the apiserver serves, it starts the node side, M11 and M12
// (nodes.go): --simulated-nodes heartbeating kubelets (package lease),
// ordinary clients of the apiserver; with --node-lease-etcd-binding each Node Lease key is bound to
// an etcd lease through the registry's KeyTTL. The etcd endpoints are
// written to the data directory (package internal/datadir) for minictl
// and kubelet-sim.
//
// Custom resources (crds.go): before the apiserver serves, crd.Serving
// lists the stored CRDs and puts the custom resources of the established
// ones in the resource table, and Start waits for that, so a restarted
// stack serves them as soon as it is ready; Serving then follows the CRDs.
// Close stops Serving before the apiserver.
//
// The controller manager (controllermanager.go) starts, once the
// apiserver serves, every control loop that is a client of the API, from
// one list and in its order: the CRD controller (controllers/crd), the
// namespace controller and the node lifecycle controller (package lease)
// before the simulated nodes start, and, last, once they are registered,
// the garbage collector;
// --controllers chooses among them as kube-controller-manager's flag does.
// Each loop runs in one goroutine the manager owns, and its workers in
// goroutines of its own (controllers/workers) that end before it returns.
// Close stops the loops, after the simulated nodes, in the reverse order
// of their start, each one's goroutines ended before the next is stopped.
//
// Before the apiserver starts it makes, on first start, the admin bearer
// token (<data-dir>/token, 0600) and a CA with a serving certificate
// (<data-dir>/pki, pki.go), and keeps them across restarts; the kubeconfig
// carries the token, the https URL and the CA (credentials.go). minicp's own
// clients (controllers, simulated nodes) use the token over plain HTTP on
// loopback, which saves them TLS.
//
// Invariants:
//   - One minicp per data directory: Start takes an exclusive flock on
//     <data-dir>/minicp.lock (lock.go) before anything else and Close drops
//     it last; a second minicp fails at once, naming the first one's pid.
//   - Start gives up when its ctx ends, at any stage, and stops what it
//     started; Close ends open watches and closes the connections that
//     carry no request at once, whatever the clients (apiserver's
//     shutdown.go), and waits at most ShutdownTimeout for requests in
//     flight.
//   - The kubeconfig is written only after the apiserver serves and the
//     simulated nodes are registered, and /readyz fails until it (and the
//     token file) is on disk, so its presence means "ready". A kubeconfig
//     left by an earlier run is removed before the apiserver listens.
//   - The simulated nodes, then the controller manager's loops, are the
//     first things Close stops, before the apiserver they talk to.
//   - Close stops the stack in the reverse order of Start: no request is
//     served after etcd is gone, and an embedded etcd closes cleanly, so the
//     next Start on the same data directory sees every object and revision.
//
// The lab pages docs/labs/01-storage-layout.md and 02-resourceversion.md
// start the control plane this package builds; 10, 11 and 12 use its
// compactor, its NOSPACE readiness and RestoreSnapshot.
package controlplane
