package registry

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
)

// SharedLister is implemented by an Interface that can answer a LIST with
// the objects it holds in memory, without copying them into a typed list
// (the watch cache). The apiserver uses it for plain JSON and protobuf
// LISTs and writes the list around each item's encoding; everything else
// calls List.
type SharedLister interface {
	// ListShared answers as List would, under the same resourceVersion
	// rules. When the answer comes from memory it is shared (and list is
	// nil); when it had to come from etcd (a continue token, an Exact
	// read, a fallback) it is list, a typed list as List returns.
	ListShared(ctx context.Context, res *Resource, namespace string, opts ListOptions) (shared *SharedList, list runtime.Object, err error)
}

// SharedList is a LIST answered from memory: the list's resourceVersion and
// the matching objects themselves, in key order. Each item is the holder's
// own runtime.CacheableObject, shared with every other reader: it encodes
// the object at most once per encoder identifier and writes the kept bytes
// every later time (a watch event's frame and a list item are two
// identifiers). Items are never modified.
type SharedList struct {
	ResourceVersion int64
	Items           []runtime.CacheableObject
}
