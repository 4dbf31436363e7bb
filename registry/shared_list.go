package registry

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
)

// SharedLister is implemented by an Interface that can answer a LIST with
// the objects it holds in memory, without copying them into a typed list
// (the watch cache). The apiserver uses it for plain JSON and protobuf
// LISTs and encodes the items one by one; everything else calls List.
type SharedLister interface {
	// ListShared answers as List would, under the same resourceVersion
	// rules. When the answer comes from memory it is shared (and list is
	// nil); when it had to come from etcd (a continue token, an Exact
	// read, a fallback) it is list, a typed list as List returns.
	ListShared(ctx context.Context, res *Resource, namespace string, opts ListOptions) (shared *SharedList, list runtime.Object, err error)
}

// SharedList is a LIST answered from memory: the list's resourceVersion and
// the matching objects themselves, in key order. The items are shared with
// every other reader and must never be modified.
type SharedList struct {
	ResourceVersion int64
	Items           []*SharedItem
}

// SharedItem is one stored object as a list item. It is immutable once
// stored (an update stores a new item), so an encoding of it, which is
// costly, is computed at most once per format and kept for every later
// LIST. The holder keeps the item as long as the object is current.
type SharedItem struct {
	obj runtime.Object

	mu        sync.Mutex // guards encodings; never held while encoding
	encodings map[string]*itemEncoding
}

// itemEncoding is one format's bytes, computed once.
type itemEncoding struct {
	once sync.Once
	raw  []byte
	err  error
}

// NewSharedItem wraps obj, which the caller gives up: it is never modified
// again.
func NewSharedItem(obj runtime.Object) *SharedItem { return &SharedItem{obj: obj} }

// Object is the stored object: read it, never modify it (DeepCopyObject it
// first).
func (i *SharedItem) Object() runtime.Object { return i.obj }

// Encoded returns the item encoded in format (a name the caller chooses,
// e.g. "application/json;v1"), calling encode the first time only. encode
// receives the stored object and must not modify it.
func (i *SharedItem) Encoded(format string, encode func(runtime.Object) ([]byte, error)) ([]byte, error) {
	i.mu.Lock()
	if i.encodings == nil {
		i.encodings = map[string]*itemEncoding{}
	}
	e, ok := i.encodings[format]
	if !ok {
		e = &itemEncoding{}
		i.encodings[format] = e
	}
	i.mu.Unlock()
	e.once.Do(func() { e.raw, e.err = encode(i.obj) })
	return e.raw, e.err
}
