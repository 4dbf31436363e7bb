// Package lease makes Node heartbeats tangible (M11-M14):
// the kubelet side that keeps a Lease per node alive, and the control-plane
// side that notices when one stops.
//
// A kubelet proves its node is alive by renewing a Lease object,
// kube-node-lease/<node name>, every leaseDurationSeconds/4 (40 s -> 10 s):
// each renewal is one small write of spec.renewTime, far cheaper than
// posting the whole node status, which the kubelet only does every 5
// minutes or when it changes. The node lifecycle controller watches Nodes
// and Leases; when a node's lease has not been renewed for the grace period
// (--node-monitor-grace-period, 50 s), it sets the node's Ready condition to
// Unknown ("Kubelet stopped posting node status.") and taints the node
// node.kubernetes.io/unreachable, so nothing new is scheduled there and its
// pods can be evicted. When the kubelet is back and reports Ready, the
// taints go.
//
// In minicp each Node Lease key is, by default, also bound to an etcd lease
// with TTL = leaseDurationSeconds (package registry, M12): a renewal is one
// MVCC write plus a KeepAlive, and when a node dies, etcd itself deletes
// the key once the TTL runs out. Upstream binds only Events to etcd leases;
// the binding is minicp's, to make etcd's Lease axis visible
// (docs/labs/05-node-lease.md). The controller treats a lease that
// disappears as a node that stopped heartbeating.
//
// # The agent (kubelet side)
//
// Agent runs one or thousands of simulated nodes in one process with a
// fixed number of goroutines: a schedule (a min-heap of nodes by due time,
// served by one goroutine) hands each due node to one of Workers workers,
// which registers it, renews its lease or posts its status, and gives it
// back with its next due time. All nodes share one HTTP client and one
// clientset. Renewals are spread over the renewal interval (the first one
// at a random point in it, every later one 0-4% late, as upstream's
// wait.JitterUntil), and a failure is retried after 200 ms, doubling up to
// 7 s (upstream's lease controller). One informer on the agent's own nodes
// notices when someone else (the lifecycle controller) changed a node's
// Ready condition, and the node posts its status again at once.
//
// # The node lifecycle controller
//
// Controller keeps Node and Lease informers and, every MonitorPeriod,
// compares what it sees with what it saw: a lease whose renewTime moved on,
// or a Ready condition whose lastHeartbeatTime moved on, is a sign of life,
// recorded with the controller's own clock (node clocks are not trusted).
// A node with no sign of life for GracePeriod, or whose lease was deleted,
// gets Ready, MemoryPressure, DiskPressure and PIDPressure set to Unknown
// with reason NodeStatusUnknown, as upstream; the taint pass then keeps
// node.kubernetes.io/unreachable (NoSchedule and NoExecute) on nodes whose
// Ready is Unknown, node.kubernetes.io/not-ready on nodes whose Ready is
// False, and neither on Ready nodes. Upstream adds the NoExecute taints
// through a rate-limited eviction queue; minicp adds them at once.
//
// Both sides record upstream's events (events.go) through the recorder
// their config is given: the kubelet's Starting, NodeHasSufficientMemory,
// NodeHasNoDiskPressure, NodeHasSufficientPID and NodeReady (when a
// condition turns healthy), about the node by name as UID; the
// controller's RegisteredNode, NodeNotReady (once, when it takes Ready
// from True) and RemovingNode, about the Node's UID. `kubectl describe
// node` shows both.
//
// # Invariants
//
//   - A node is held by at most one goroutine at a time: it is either in
//     the schedule or with exactly one worker, so its state needs no lock.
//   - A renewal writes from the last Lease the node wrote (its
//     resourceVersion), with no GET; only a 409 Conflict, a 404 or a first
//     start makes it read the Lease, and a renewal makes at most 5 writes
//     in a row (upstream's maxUpdateRetries) before it backs off.
//   - A failed request is retried after a backoff of 200 ms doubling to
//     7 s; a worker never sleeps, the schedule holds the node until then.
//   - The agent's goroutines are the schedule, Workers workers and the
//     informer's; Stop ends them all and returns only when they have
//     returned. The controller's are the informers' and the monitor loop's,
//     with the same Stop.
//   - The controller's record of a node (last seen lease and heartbeat,
//     and when they were seen) is touched only by its monitor goroutine.
//   - Time comes from an injected k8s.io/utils/clock, so tests move a fake
//     clock instead of sleeping through grace periods.
//
// cmd/kubelet-sim runs the agent against any apiserver; minicp runs it
// in-process with --simulated-nodes, next to the controller. Labs:
// docs/labs/05-node-lease.md, 06-lease-checkpoint.md, 07-heartbeat-scale.md.
package lease
