package watchcache

import (
	"context"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"minicp/registry"
)

// bookmarkBeforeDeadline is how long before a watch's deadline it gets a
// last BOOKMARK, so that the client resumes from a recent resourceVersion
// (upstream: 2 s).
const bookmarkBeforeDeadline = 2 * time.Second

// watcher is one client's WATCH served from the cache.
type watcher struct {
	cache     *resourceCache
	prefix    string // etcd key prefix of the watch's namespace scope
	namespace string // index placement, when index < 0
	// index is the Resource.Indexes entry whose field the watch's selector
	// requires to equal value (a kubelet's spec.nodeName=<node>): the
	// watcher is placed by it. -1: placed by namespace.
	index     int
	value     string
	pred      registry.Predicate
	bookmarks bool
	startRV   int64 // the watch sends changes after this revision
	ctx       context.Context

	// input is the bounded buffer the dispatcher fills without blocking;
	// only resourceCache.run sends on it (under cache.mu), no one closes it.
	input chan *event
	// result carries events to the client; run closes it when it returns.
	result chan watch.Event
	// done is closed once (stopOnce) to end the watch: by Stop, or under
	// cache.mu when the buffer overflows or the cache re-initialises.
	done     chan struct{}
	stopOnce sync.Once

	// Guarded by cache.mu.
	registered   bool
	nextBookmark time.Time
	deadline     time.Time // in the cache's clock; zero when none

	// Set before run starts, then owned by run: what the watch starts with.
	initial     []*element // current state, sent as ADDED
	interval    []*event   // window events after startRV
	endBookmark bool       // end the initial state with the initial-events-end BOOKMARK
}

var _ watch.Interface = (*watcher)(nil)

// Stop ends the watch; its result channel closes soon after, whether or
// not anyone reads it. Stop may be called more than once.
func (w *watcher) Stop() { w.stopOnce.Do(func() { close(w.done) }) }

// ResultChan returns the stream of events.
func (w *watcher) ResultChan() <-chan watch.Event { return w.result }

// run is the watch's goroutine: initial state, then the window interval,
// then whatever the dispatcher buffers, until the watch ends.
func (w *watcher) run() {
	defer close(w.result)
	defer w.cache.forget(w)

	for _, e := range w.initial {
		if !w.pred.Empty() && !w.pred.Matches(e.obj) {
			continue
		}
		// The element's own wrapper: every watch starting with the current
		// state shares its encodings, and so do the live ADDED events.
		if !w.send(watch.Event{Type: watch.Added, Object: e.shared}) {
			return
		}
	}
	w.initial = nil
	lastRV := w.startRV
	for _, e := range w.interval {
		if !w.deliver(e, &lastRV) {
			return
		}
	}
	w.interval = nil
	if w.endBookmark && !w.send(w.bookmark(w.startRV, true)) {
		return
	}
	for {
		select {
		case e := <-w.input:
			if !w.deliver(e, &lastRV) {
				return
			}
		case <-w.done:
			return
		case <-w.ctx.Done():
			return
		}
	}
}

// deliver sends what e means to this watcher, if anything; false means
// the watch has ended. lastRV is the newest revision sent.
func (w *watcher) deliver(e *event, lastRV *int64) bool {
	if e.typ == watch.Bookmark {
		if !w.bookmarks || e.rv < *lastRV {
			return true
		}
		*lastRV = e.rv
		return w.send(w.bookmark(e.rv, false))
	}
	// A watch from a revision the cache had not reached yet skips what
	// came before it; the prefix check matters for watchers indexed by
	// node, which see every namespace's events for their node.
	if e.rv <= w.startRV || !strings.HasPrefix(e.key, w.prefix) {
		return true
	}
	ev, ok := e.forWatcher(w.pred)
	if !ok {
		return true
	}
	*lastRV = e.rv
	return w.send(ev)
}

// send delivers ev unless the watch ends first.
func (w *watcher) send(ev watch.Event) bool {
	select {
	case w.result <- ev:
		return true
	case <-w.done:
		return false
	case <-w.ctx.Done():
		return false
	}
}

// bookmark is an empty object of the kind carrying only rv, annotated as
// the end of the initial events when initialEnd is set.
func (w *watcher) bookmark(rv int64, initialEnd bool) watch.Event {
	obj := w.cache.res.New()
	if err := registry.StampObject(obj, rv); err != nil {
		return errorEvent(apierrors.NewInternalError(err))
	}
	if initialEnd {
		m, err := meta.Accessor(obj)
		if err != nil {
			return errorEvent(apierrors.NewInternalError(err))
		}
		m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	return watch.Event{Type: watch.Bookmark, Object: obj}
}

// bookmarkAfter is when the watcher is next due a BOOKMARK: one period from
// now, or just before its deadline if that comes first.
func (w *watcher) bookmarkAfter(now time.Time, period time.Duration) time.Time {
	next := now.Add(period)
	if !w.deadline.IsZero() {
		if last := w.deadline.Add(-bookmarkBeforeDeadline); last.After(now) && last.Before(next) {
			next = last
		}
	}
	return next
}

// forget removes a watcher whose goroutine has ended.
func (c *resourceCache) forget(w *watcher) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(w, false)
}

// removeLocked unregisters w and ends it. slow marks a watcher ended
// because its buffer was full.
func (c *resourceCache) removeLocked(w *watcher, slow bool) {
	w.Stop()
	if !w.registered {
		return
	}
	w.registered = false
	c.watchers.remove(w)
	c.metrics.watchers.Dec()
	if slow {
		c.metrics.terminated.Inc()
		c.log.Debug("ended a watcher that could not keep up", "buffer", cap(w.input), "resourceVersion", c.rv)
	}
}

// watcherIndex finds the watchers an event concerns without visiting all
// of them: by namespace ("" holds all-namespace watches and those of
// cluster-scoped resources), and, for watches whose selector requires an
// indexed field to have one value, by that value (an event goes to the
// watchers of its new and its old value). cache.mu guards it.
type watcherIndex struct {
	byNamespace map[string]map[*watcher]struct{}
	// byIndex[i] maps a value of Resource.Indexes[i] to its watchers.
	byIndex []map[string]map[*watcher]struct{}
	count   int
}

func newWatcherIndex(indexes int) watcherIndex {
	x := watcherIndex{byNamespace: map[string]map[*watcher]struct{}{}}
	for range indexes {
		x.byIndex = append(x.byIndex, map[string]map[*watcher]struct{}{})
	}
	return x
}

func (x *watcherIndex) slot(w *watcher) (map[string]map[*watcher]struct{}, string) {
	if w.index >= 0 {
		return x.byIndex[w.index], w.value
	}
	return x.byNamespace, w.namespace
}

func (x *watcherIndex) add(w *watcher) {
	m, k := x.slot(w)
	if m[k] == nil {
		m[k] = map[*watcher]struct{}{}
	}
	m[k][w] = struct{}{}
	x.count++
}

func (x *watcherIndex) remove(w *watcher) {
	m, k := x.slot(w)
	if _, ok := m[k][w]; !ok {
		return
	}
	delete(m[k], w)
	if len(m[k]) == 0 {
		delete(m, k)
	}
	x.count--
}

// each calls fn for every watcher; fn may remove it.
func (x *watcherIndex) each(fn func(*watcher)) {
	for _, m := range append([]map[string]map[*watcher]struct{}{x.byNamespace}, x.byIndex...) {
		for _, set := range m {
			for w := range set {
				fn(w)
			}
		}
	}
}

// candidates calls fn for every watcher e may concern, once each; fn may
// remove it.
func (x *watcherIndex) candidates(e *event, fn func(*watcher)) {
	visit := func(set map[*watcher]struct{}) {
		for w := range set {
			fn(w)
		}
	}
	visit(x.byNamespace[""])
	if e.namespace != "" {
		visit(x.byNamespace[e.namespace])
	}
	for i, m := range x.byIndex {
		if len(m) == 0 {
			continue
		}
		visit(m[e.indexed[i]])
		if e.prev != nil && e.prevIndexed[i] != e.indexed[i] {
			visit(m[e.prevIndexed[i]])
		}
	}
}

// errorEvent is an ERROR event carrying err's Status, the form client-go's
// reflector understands (410 Expired -> relist).
func errorEvent(err *apierrors.StatusError) watch.Event {
	status := err.Status()
	return watch.Event{Type: watch.Error, Object: &status}
}

// staticWatch is a watch whose events are known up front: one ERROR event,
// for a watch that cannot be served (as upstream sends it).
type staticWatch struct{ ch chan watch.Event }

func newStaticWatch(events ...watch.Event) staticWatch {
	ch := make(chan watch.Event, len(events))
	for _, ev := range events {
		ch <- ev
	}
	close(ch)
	return staticWatch{ch}
}

func (s staticWatch) Stop()                          {}
func (s staticWatch) ResultChan() <-chan watch.Event { return s.ch }
