package watchcache

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"minicp/registry"
)

// event is one change of the resource as the cache received it from etcd,
// kept in the window and handed to every interested watcher. Events are
// shared by all watchers and never modified after dispatch (prevAtRV is
// computed once, under its sync.Once).
type event struct {
	typ       watch.EventType // Added, Modified or Deleted; Bookmark for the periodic ones
	rv        int64           // revision of the change (of the deletion for Deleted)
	key       string
	namespace string
	// object is the new state; for Deleted, the last state stamped with
	// the deletion's revision (what watchers receive). nil for bookmarks.
	object *cachingObject
	// prev is the state before the change as the cache held it (stamped
	// with its own mod revision); nil when the key was new.
	prev runtime.Object
	// indexed and prevIndexed are the new and old states' values of the
	// resource's indexes (element.indexed), to find the watchers.
	indexed, prevIndexed []string

	prevOnce sync.Once
	prevAtRV *cachingObject // prev, stamped with rv: see deletedForWatcher
}

// bookmarkEvent is what the dispatcher puts in watchers' buffers for a
// periodic BOOKMARK: the cache's resourceVersion at that moment.
func bookmarkEvent(rv int64) *event { return &event{typ: watch.Bookmark, rv: rv} }

// forWatcher turns e into the event a watcher selecting with pred sees,
// if any. Selectors are judged on the old and new states, as upstream: an
// object that stops matching is DELETED for the watcher, one that starts
// matching is ADDED.
func (e *event) forWatcher(pred registry.Predicate) (watch.Event, bool) {
	if pred.Empty() {
		return watch.Event{Type: e.typ, Object: e.object}, true
	}
	switch typ, ok := pred.SelectChange(e.typ, e.object.obj, e.prev); {
	case !ok:
		return watch.Event{}, false
	case typ == watch.Deleted && e.typ == watch.Modified:
		return watch.Event{Type: watch.Deleted, Object: e.deletedForWatcher()}, true
	default:
		return watch.Event{Type: typ, Object: e.object}, true
	}
}

// deletedForWatcher is the object of the DELETED event a watcher gets when
// the object stops matching its selectors: the previous state, stamped with
// this change's revision (upstream does the same), so that the watcher's
// resourceVersion still advances.
func (e *event) deletedForWatcher() *cachingObject {
	e.prevOnce.Do(func() {
		obj := e.prev.DeepCopyObject()
		if err := registry.StampObject(obj, e.rv); err != nil {
			obj = e.prev // cannot happen for API objects; the old version will do
		}
		e.prevAtRV = newCachingObject(obj, e.object.encodings)
	})
	return e.prevAtRV
}
