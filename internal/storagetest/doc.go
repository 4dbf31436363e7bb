// Package storagetest is the storage conformance suite: one set of tests
// that every implementation of registry.Interface must pass, run against
// both the etcd-backed *registry.Store (kinds/conformance_test.go) and
// the watch cache in front of it (watchcache/conformance_test.go). It pins
// down what a client may rely on whichever path answers: GET and LIST by
// every resourceVersion rule, pagination, selectors, WATCH from "", "0", N
// and from a compacted revision, bookmarks and the watch-list bookmark,
// delete events at the deletion's revision, and optimistic-concurrency
// conflicts (M4, M5, M6, M8).
//
// It is a test helper package: it imports testing and is imported only by
// _test.go files.
package storagetest
