// Package rangealloc hands out Service ClusterIPs and NodePorts, each at
// most once, and keeps what it handed out in etcd, so that a restart of
// the apiserver never gives an address or a port a second time.
//
// It keeps each range as upstream's apiserver does: one bitmap per range,
// bit i set when the i-th value of the range is in use, stored as a core/v1
// RangeAllocation object (its range, e.g. "10.0.0.0/24" or "30000-32767",
// and the bitmap's bytes, big-endian) at upstream's keys
// /registry/ranges/serviceips and /registry/ranges/servicenodeports. Every
// allocation and release is a read-modify-write of that one key under a
// compare on its mod revision, as every write in the registry is: two
// apiservers sharing etcd (or two requests in one) cannot hand out the
// same value, the loser of a race reads again and retries.
//
// An IP range leaves out the network's first address and, for IPv4, its
// broadcast address; offset 0 is the first usable address (10.0.0.1 in
// 10.0.0.0/24), the one the "kubernetes" Service takes. Values given out
// without being asked for are picked at random, first from the upper part
// of the range, leaving its lower band (1/16 of it, between 16 and 256
// values for IPs) to values a client asks for by number, as upstream does.
//
// Invariants:
//   - a value is set in the stored bitmap from the allocation that returns
//     it until the release that clears it; no two allocations return a
//     value in between;
//   - a failed allocation or release leaves etcd unchanged.
package rangealloc
