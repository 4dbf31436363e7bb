// Package embedetcd runs etcd v3.7 members inside the minicp process. For
// each member it binds a client and a peer listener, builds etcd's
// config.ServerConfig itself and starts etcdserver.EtcdServer, then serves
// etcd's peer handler (Raft between members) on the peer listener and
// etcd's v3 gRPC API on the client listener, so etcdctl and any clientv3
// client can talk to it. It does what embed.StartEtcd does, in the open and
// without embed's limits: every server knob is reachable, including the
// lease checkpoint interval that embed fixes at 5 minutes. That knob makes
// M13 tangible: KeepAlive is not a Raft write, so a new
// leader restarts each lease's TTL unless the old one checkpointed it, and
// only leases whose remaining TTL exceeds the interval are checkpointed. The
// same cluster serves the compaction, quota and read-path labs (M3, M14,
// M17) in docs/labs.
//
// # Flags and feature gates
//
// Config.AddFlags names each knob as etcd v3.7 does and keeps the etcd v3.5
// names of those etcd has renamed since: lease checkpointing is the feature
// gate LeaseCheckpoint (--feature-gates=LeaseCheckpoint=true) or v3.5's
// --experimental-enable-lease-checkpoint, both setting
// Config.EnableLeaseCheckpoint through one table (featuregates.go); the
// same for LeaseCheckpointPersist. docs/ARCHITECTURE.md lists the defaults
// that changed between the two releases and what minicp follows.
//
// # Usage
//
//	cfg := embedetcd.NewConfig()
//	cfg.DataDir = dir
//	cluster, err := embedetcd.Start(ctx, cfg) // returns when ready, with a leader
//	...
//	cluster.Client().Put(ctx, "k", "v")
//	defer cluster.Close()
//
// # Maintenance and snapshots
//
// maintenance.go and snapshot.go work through any etcd client, so minictl
// uses them against a running minicp (M17,
// M16): Compact and CompactKeep drop history below a revision (refusing a
// revision etcd has not reached, or one it is compacted to already);
// Defragment gives the freed pages back, member by member; ListAlarms and
// DisarmAlarms handle NOSPACE. SaveSnapshot streams one member's database
// to a file; RestoreSnapshot builds a one-member data directory from it
// with etcdutl v3.7, optionally bumping the revision and marking it
// compacted, after checking the file's checksum and that the target is
// empty, and stages the result so that a failure changes nothing.
//
// # Start-up, step by step
//
//  1. Bind every member's listeners (port 0 keeps the kernel's free port;
//     no close-and-reuse) and start answering peers with 503.
//  2. If every member directory holds a WAL, restart: no initial cluster is
//     passed, the WAL knows the membership. If none does, bootstrap all
//     members together with an initial cluster map and token. Anything
//     else is refused rather than silently ignored.
//  3. Create and start each etcd server; the peer listener now reaches it.
//  4. Wait until every server is ready (it has published itself through
//     Raft, so a leader exists), then serve clients: HTTP/2 goes to gRPC,
//     HTTP/1 to /health, /metrics and /version (cmux on one port).
//  5. Open the shared client, wait until all members name the same
//     leader, and check a quorum read.
//
// # Cluster operations
//
// Status reports, per member, what `etcdctl endpoint status` shows (leader,
// Raft term and index, revision, database size) plus the compacted
// revision, and the cluster's alarms. MoveLeader hands leadership to a
// named member (etcdctl move-leader). StopMember stops one member as a
// crash would, keeping its data; RestartMember brings it back on the same
// URLs, and it catches up from the leader.
//
// # Invariants
//
//   - A member keeps its data in DataDir/<member name>; a restart keeps all
//     keys and revisions.
//   - Client serving starts only after the server is ready, as in embed.
//   - Start either returns a running cluster or stops everything it began.
//   - Close stops members in a fixed order (see Cluster.Close) and returns
//     only when every goroutine this package started has returned; members
//     stopped earlier by StopMember are already down and skipped.
//   - A restarted member is a new *Member with the old name, ID, URLs and
//     data directory; a stopped *Member is never started again.
//   - etcd's metrics stay in Prometheus' default registry (etcd registers
//     them there itself, once per process); the apiserver's /metrics serves
//     them beside its stack's own registry, and so does each member's
//     client port.
//   - The watch progress notify interval is process-wide in etcd: the last
//     cluster started sets it for every cluster in the process.
//   - A refused compaction or restore leaves etcd and the file system as
//     they were.
package embedetcd
