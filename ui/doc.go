// Package ui is minicp's live teaching page, served at /ui/ next to the
// API, and the read-only JSON views it reads. It puts several mechanisms
// in one picture that refreshes every second: the revision axis (where
// etcd is, where it has compacted to, which window each watch cache still
// holds: M5, M6, M8), the heartbeat picture (each node's time since its
// last Lease renewal against the grace period, the TTL of the etcd lease
// its Lease key is bound to, and which etcd member leads in which term:
// M11-M14), an event tape (the newest watch events), and the load (requests
// per second by verb, etcd latency by operation, database size against the
// quota, alarms: M9, M15, M17). Lab: docs/labs/13-live-page.md.
//
// The page is plain HTML, CSS and JavaScript embedded in the binary (Go
// embed): no build step, nothing fetched from anywhere but minicp. It
// reads:
//
//	GET /debug/etcd       EtcdView: revision, compacted revision, members, leader, term, db size, quota, alarms;
//	                      Clusters: one axis per etcd cluster (the main one, and the etcd holding events apart, M10)
//	GET /debug/nodes      NodesView: counts and a renewal-age histogram of every node, one page in detail
//	GET /debug/events     EventsView: the newest watch events across resources
//	GET /debug/load       LoadView: request and etcd rates, etcd p99 by operation
//	GET /debug/watchcache and /debug/watchcache/<resource>/explain (package watchcache)
//
// Each view is computed from the mechanism's own code rather than
// re-derived: the windows and the "would a watch from N be replayed, get
// 410 or wait" answer come from the watch cache, the etcd figures from
// package embedetcd (in-process for an embedded etcd, through the client's
// Maintenance API for --etcd-servers), the lease TTLs from etcd's
// TimeToLive.
//
// The revision axis is drawn once per etcd cluster, each on its own scale
// with its members listed, since revisions count one cluster's writes. No
// two labels on it overlap (each takes the first free lane above the
// axis; tick labels that would touch are left out), and when what matters
// (the compacted revision, the events the windows hold, now) spans less
// than a fifth of the history, the axis zooms to it by itself and says so.
// Each cache is named by resource and API group (the core group's and
// events.k8s.io's events are two caches). The caches holding objects or
// events come first; the empty ones, most of the kinds served, share one
// line that opens them, on the axis and in the table beneath it.
//
// # Invariants
//
//   - The views only read: nothing here writes to etcd or to the API.
//   - A refresh costs etcd little, whatever the cluster's size: Nodes and
//     Leases are listed at resourceVersion "0" (the cache's memory), and
//     etcd is asked only for its status and for the TTLs of the nodes on
//     the page shown (at most 200).
//   - No goroutine runs between requests. The load view's rates compare
//     readings of the metrics taken when the view is asked for, at most
//     one per 0.9 s, kept for 10 s (load.go).
//   - "Seconds since the last renewal" is the view's clock minus the
//     Lease's spec.renewTime. The node lifecycle controller does not trust
//     node clocks and times silence with its own; for simulated nodes in
//     the same process the two agree.
package ui
