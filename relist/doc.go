// Package relist makes the cost of a relist storm visible (M6,
// docs/MECHANISMS.md). An informer that loses its watch resumes from the last
// resourceVersion it saw. If the history after that revision is still there
// (in etcd, or in the apiserver's watch cache) it gets only what changed;
// if it was compacted away, the server answers 410 Gone and the informer
// fetches the whole state again: a relist. Many informers cut off together
// (an apiserver restart, a network blip) and compaction in between turn
// into a storm of full lists. How long the history is kept (the compaction
// interval, the cache's window) against how long clients are away decides
// which of the two happens.
//
// The package has three parts:
//
//   - Link, a TCP relay that can be cut and restored, to take informers
//     away from an apiserver and give them back without stopping either;
//   - Informer, a client-go informer on ConfigMaps whose ListerWatcher
//     counts what its reflector asks for: LIST, streaming LIST (watch-list,
//     the default of client-go v0.37), resumed WATCH, and 410 answers;
//   - RunStorm, the experiment: K informers cut off, N writes, optional
//     compaction, reconnect; it reports per informer whether it relisted
//     and how long it took to catch up, and from the apiserver's /metrics
//     the LISTs, streaming LISTs and bytes it served.
//
// `minictl relist` runs RunStorm against a running minicp, and
// `minictl informer` runs one Informer and prints what it does; the labs
// docs/labs/10-compaction-and-relist.md and 12-snapshot-restore.md use
// them, and e2e/relist_test.go asserts the figures.
//
// Invariants:
//   - A Link never forwards a byte while cut; connections accepted while cut
//     are relayed, in order, by Restore. Close waits for every goroutine.
//   - An Informer's counters only grow; Counts is safe from any goroutine.
//   - RunStorm stops every informer and the link before it returns.
package relist
