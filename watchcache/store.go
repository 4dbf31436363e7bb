package watchcache

import (
	"sort"
	"sync/atomic"

	"github.com/google/btree"
	"k8s.io/apimachinery/pkg/runtime"

	"minicp/registry"
)

// element is one object in the cache, under its etcd key. Elements and
// their objects are never modified once stored: an update stores a new one.
type element struct {
	key string // etcd key, e.g. "/registry/pods/default/nginx"
	// indexed holds obj's value of each of the resource's indexes
	// (Resource.Indexes, in order; a pod's spec.nodeName); nil without.
	indexed []string
	obj     runtime.Object
	// shared is obj as every reader hands it to an encoder: the object of
	// the watch event that stored it, of the ADDED events of watches that
	// start with the current state, and a LIST's item. Each encoding of it
	// (per media type and form) is made once and reused while the object
	// is current.
	shared *cachingObject
}

// newElement wraps obj, computing its index values and counting its
// encodings in encodings.
func newElement(key string, obj runtime.Object, indexes []registry.Index, encodings *atomic.Int64) *element {
	e := &element{key: key, obj: obj, shared: newCachingObject(obj, encodings)}
	if len(indexes) > 0 {
		e.indexed = make([]string, len(indexes))
		for i, ix := range indexes {
			e.indexed[i] = ix.Value(obj)
		}
	}
	return e
}

// objectStore holds the current state of one resource, ordered by key (a
// B-tree: LIST answers come out sorted, as etcd returns them, and a
// namespace is a key range) and indexed by each of the resource's indexes
// (Resource.Indexes: pods by spec.nodeName).
//
// It is not safe for concurrent use: resourceCache.mu guards it.
type objectStore struct {
	tree *btree.BTreeG[*element]
	// byIndex[i] maps a value of index i to the elements with that value,
	// by key; one map per Resource.Indexes entry.
	byIndex []map[string]map[string]*element
}

func newObjectStore(indexes int) *objectStore {
	s := &objectStore{tree: btree.NewG(32, func(a, b *element) bool { return a.key < b.key })}
	for range indexes {
		s.byIndex = append(s.byIndex, map[string]map[string]*element{})
	}
	return s
}

func (s *objectStore) len() int { return s.tree.Len() }

func (s *objectStore) get(key string) *element {
	e, _ := s.tree.Get(&element{key: key})
	return e
}

// put stores e, replacing what was under its key.
func (s *objectStore) put(e *element) {
	if old, replaced := s.tree.ReplaceOrInsert(e); replaced {
		s.unindex(old)
	}
	for i, m := range s.byIndex {
		keys := m[e.indexed[i]]
		if keys == nil {
			keys = map[string]*element{}
			m[e.indexed[i]] = keys
		}
		keys[e.key] = e
	}
}

// delete removes what is under key.
func (s *objectStore) delete(key string) {
	if old, ok := s.tree.Delete(&element{key: key}); ok {
		s.unindex(old)
	}
}

func (s *objectStore) unindex(e *element) {
	for i, m := range s.byIndex {
		if keys := m[e.indexed[i]]; keys != nil {
			delete(keys, e.key)
			if len(keys) == 0 {
				delete(m, e.indexed[i])
			}
		}
	}
}

// withPrefix returns the elements whose key starts with prefix, in key
// order. prefix ends with "/", so its range ends before prefix with the
// slash replaced by the next byte ("0").
func (s *objectStore) withPrefix(prefix string) []*element {
	var out []*element
	end := prefix[:len(prefix)-1] + "0"
	s.tree.AscendRange(&element{key: prefix}, &element{key: end}, func(e *element) bool {
		out = append(out, e)
		return true
	})
	return out
}

// inIndex returns, in key order, the elements whose value of index i is
// value and whose key starts with prefix.
func (s *objectStore) inIndex(i int, value, prefix string) []*element {
	var out []*element
	for key, e := range s.byIndex[i][value] {
		if len(key) >= len(prefix) && key[:len(prefix)] == prefix {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}
