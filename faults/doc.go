// Package faults injects latency and errors where the triage
// drill (M15) looks for them, so that a learner can make the apiserver slow
// on purpose and then tell from the metrics which side is to blame
// (M9, M15):
//
//	apiserver slow or 504
//	  -> is the etcd request slow in the apiserver's metrics?
//	     no  -> apiserver: admission, cache, auth     (fault point "admission")
//	     yes -> name the etcd axis                    (points "etcd.range",
//	                                                   "etcd.txn", "etcd.watch",
//	                                                   "etcd.lease")
//
// A Set holds the active faults. It is the registry's FaultHook (every
// etcd request of the Store passes it first, and is timed with it, so an
// etcd fault moves etcd_request_duration_seconds), an admission plugin
// ("DebugFaults", whose delay shows in the admission phase and in
// apiserver_admission_controller_admission_duration_seconds while etcd's
// metrics stay flat), and a small HTTP API served at /debug/faults:
//
//	GET    /debug/faults                  list the faults and how often each hit
//	POST   /debug/faults                  add one: {"point":"etcd.range","delay":"2s","resource":"pods"}
//	DELETE /debug/faults[?point=P]        clear all faults, or those of one point
//	POST   /debug/faults/members/NAME/stop     stop an embedded etcd member (crash)
//	POST   /debug/faults/members/NAME/restart  start it again on its data
//
// `minictl fault add|ls|clear` speaks this API. minicp mounts it only with
// --enable-debug-faults, and it answers only clients on loopback.
//
// Invariants:
//
//   - A delay never outlives its request: it ends when the request's
//     context does (the deadline that makes the apiserver answer 504).
//   - A fault applies to its point, and to one resource if it names one;
//     a resource-specific fault wins over a point-wide one.
//   - Adding a fault replaces the one with the same point and resource.
package faults
