// Package reqtrace answers "where did the time of this request go?" — the
// first question of the triage drill (M9, M15): is the apiserver
// slow on its own (admission, cache, encoding) or is it waiting for etcd?
//
// The apiserver puts a Trace in each request's context. Code on the
// request's path marks the phases it runs — the apiserver around
// authentication, admission, storage and encoding; the registry around
// every etcd request; a cache around its waits for freshness — with
//
//	defer reqtrace.From(ctx).Begin(reqtrace.Etcd)()
//
// Phases nest, and time is charged to the innermost one only: an etcd read
// made by an admission plugin counts as etcd, not admission. The phases of
// a request therefore add up to at most its total; the rest ("other") is
// routing, body decoding and the like. The apiserver logs the breakdown of
// every request slower than its threshold and, when asked, returns it in
// the Minicp-Phases response header (docs/labs/08-triage.md).
//
// Invariants:
//
//   - A nil *Trace is valid and records nothing, so library code calls
//     From(ctx).Begin(...) without checking whether anyone is tracing.
//   - At any instant at most one phase is charged: the innermost open one.
//   - Snapshot may be called from another goroutine while the request is
//     still running (a request that hit its deadline is logged while its
//     handler is still waiting): the open phase is charged up to now and
//     reported as open.
package reqtrace
