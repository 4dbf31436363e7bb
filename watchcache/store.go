package watchcache

import (
	"sort"
	"sync/atomic"

	"github.com/google/btree"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// nodeNameField is the field selector pods are indexed by: a kubelet
// watches and lists only the pods bound to its node.
const nodeNameField = "spec.nodeName"

// element is one object in the cache, under its etcd key. Elements and
// their objects are never modified once stored: an update stores a new one.
type element struct {
	key      string // etcd key, e.g. "/registry/pods/default/nginx"
	nodeName string // pods: spec.nodeName; "" otherwise
	obj      runtime.Object
	// shared is obj as every reader hands it to an encoder: the object of
	// the watch event that stored it, of the ADDED events of watches that
	// start with the current state, and a LIST's item. Each encoding of it
	// (per media type and form) is made once and reused while the object
	// is current.
	shared *cachingObject
}

// newElement wraps obj, counting its encodings in encodings.
func newElement(key string, obj runtime.Object, encodings *atomic.Int64) *element {
	return &element{key: key, nodeName: nodeNameOf(obj), obj: obj, shared: newCachingObject(obj, encodings)}
}

// objectStore holds the current state of one resource, ordered by key (a
// B-tree: LIST answers come out sorted, as etcd returns them, and a
// namespace is a key range) and, for pods, indexed by spec.nodeName.
//
// It is not safe for concurrent use: resourceCache.mu guards it.
type objectStore struct {
	tree *btree.BTreeG[*element]
	// byNode maps a node name to the keys of the pods bound to it; nil for
	// resources without the index.
	byNode map[string]map[string]*element
}

func newObjectStore(indexNodes bool) *objectStore {
	s := &objectStore{tree: btree.NewG(32, func(a, b *element) bool { return a.key < b.key })}
	if indexNodes {
		s.byNode = map[string]map[string]*element{}
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
	if s.byNode != nil {
		keys := s.byNode[e.nodeName]
		if keys == nil {
			keys = map[string]*element{}
			s.byNode[e.nodeName] = keys
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
	if s.byNode == nil {
		return
	}
	if keys := s.byNode[e.nodeName]; keys != nil {
		delete(keys, e.key)
		if len(keys) == 0 {
			delete(s.byNode, e.nodeName)
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

// onNode returns, in key order, the elements bound to node whose key
// starts with prefix. ok is false when the resource has no node index.
func (s *objectStore) onNode(node, prefix string) (out []*element, ok bool) {
	if s.byNode == nil {
		return nil, false
	}
	for key, e := range s.byNode[node] {
		if len(key) >= len(prefix) && key[:len(prefix)] == prefix {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out, true
}

// nodeNameOf is the value pods are indexed by.
func nodeNameOf(obj runtime.Object) string {
	if pod, ok := obj.(*corev1.Pod); ok {
		return pod.Spec.NodeName
	}
	return ""
}
