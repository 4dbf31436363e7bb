package watchcache

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"minicp/registry"
)

// listPageSize is how many objects one etcd range read of the initial list
// asks for (upstream's cacher pages its lists the same way).
const listPageSize = 10000

// Re-list backoff: the first retry after a failed list or a broken watch
// waits minBackoff, doubling to maxBackoff while failures continue.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// run is the cache's feed: list, then watch from the list's revision,
// until the watch breaks, then again. It is the only goroutine that writes
// the cache, and it ends when ctx does (Cache.Close).
func (c *resourceCache) run(ctx context.Context) {
	backoff := minBackoff
	for {
		started := c.clock.Now()
		err := c.listAndWatch(ctx)
		c.becomeUnready()
		if ctx.Err() != nil {
			return
		}
		c.stats.lastInitReason.Store(err.Error())
		c.log.Info("watch cache re-listing: its etcd watch ended; every client watch was closed", "err", err)
		if c.clock.Since(started) > maxBackoff {
			backoff = minBackoff // it had been working: retry at once
		}
		select {
		case <-c.clock.After(backoff):
		case <-ctx.Done():
			return
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// listAndWatch seeds the cache with a list at revision R, then applies the
// etcd watch from R (with progress notifications, which arrive as
// BOOKMARKs) until it ends. It always returns an error saying why.
func (c *resourceCache) listAndWatch(ctx context.Context) error {
	objs, rev, err := c.listAll(ctx)
	if err != nil {
		return fmt.Errorf("listing: %w", err)
	}
	feedCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := c.store.Watch(c.feedContext(feedCtx), c.res, "", registry.ListOptions{
		ResourceVersion:     registry.FormatResourceVersion(rev),
		AllowWatchBookmarks: true,
	})
	if err != nil {
		return fmt.Errorf("watching from %d: %w", rev, err)
	}
	defer w.Stop()
	if err := c.replace(objs, rev); err != nil {
		return err
	}
	tick := c.clock.NewTicker(c.bookmarkTick())
	defer tick.Stop()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return errors.New("etcd watch closed")
			}
			if !c.waitWhilePaused(ctx) {
				return ctx.Err()
			}
			if err := c.handle(ev); err != nil {
				return err
			}
		case <-tick.C():
			c.sendBookmarks()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// bookmarkTick is how often run looks for watchers due a bookmark.
func (c *resourceCache) bookmarkTick() time.Duration {
	return min(c.cfg.BookmarkFrequency, time.Second)
}

// listAll reads every object of the resource, in pages, at one revision
// (a quorum read: the first page is linearizable, the rest at its revision).
func (c *resourceCache) listAll(ctx context.Context) ([]runtime.Object, int64, error) {
	var (
		all  []runtime.Object
		rev  int64
		opts = registry.ListOptions{Limit: listPageSize}
	)
	for {
		list, err := c.store.List(ctx, c.res, "", opts)
		if err != nil {
			return nil, 0, err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, 0, err
		}
		all = append(all, items...)
		lm, err := meta.ListAccessor(list)
		if err != nil {
			return nil, 0, err
		}
		if rev == 0 {
			if rev, err = registry.ParseResourceVersion(lm.GetResourceVersion()); err != nil {
				return nil, 0, err
			}
		}
		if lm.GetContinue() == "" {
			return all, rev, nil
		}
		opts.Continue = lm.GetContinue()
	}
}

// replace makes objs, read at revision rev, the cache's content: the
// window restarts at rev and the cache is ready.
func (c *resourceCache) replace(objs []runtime.Object, rev int64) error {
	store := newObjectStore(len(c.res.Indexes))
	for _, obj := range objs {
		e, err := c.elementOf(obj)
		if err != nil {
			return err
		}
		store.put(e)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.objects = store
	c.window.reset(rev)
	c.rv = 0 // a restored etcd may have gone back in time: take rev as it is
	c.advanceLocked(rev)
	c.ready = true
	close(c.readyCh)
	c.metrics.initializations.Inc()
	c.log.Debug("watch cache initialized", "resourceVersion", rev, "objects", store.len())
	return nil
}

// becomeUnready marks the cache not ready and ends every client watch:
// until the next list, the cache cannot tell what they would miss.
func (c *resourceCache) becomeUnready() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ready {
		c.ready = false
		c.readyCh = make(chan struct{})
	}
	c.watchers.each(func(w *watcher) { c.removeLocked(w, false) })
}

// handle applies one event of the etcd watch.
func (c *resourceCache) handle(ev watch.Event) error {
	switch ev.Type {
	case watch.Added, watch.Modified, watch.Deleted:
		return c.apply(ev)
	case watch.Bookmark:
		// etcd's progress notification: nothing of the resource changed
		// up to this revision. Clients get the cache's own bookmarks.
		m, err := meta.Accessor(ev.Object)
		if err != nil {
			return err
		}
		rev, err := registry.ParseResourceVersion(m.GetResourceVersion())
		if err != nil {
			return err
		}
		c.mu.Lock()
		c.advanceLocked(rev)
		c.mu.Unlock()
		return nil
	case watch.Error:
		if status, ok := ev.Object.(*metav1.Status); ok {
			return &apierrors.StatusError{ErrStatus: *status}
		}
		return fmt.Errorf("etcd watch error: %v", ev.Object)
	}
	return fmt.Errorf("unexpected %s event from etcd", ev.Type)
}

// apply stores one change and hands it to the watchers, in one critical
// section (doc.go: every event is in what a watcher started from or in its
// buffer).
func (c *resourceCache) apply(ev watch.Event) error {
	e, err := c.elementOf(ev.Object)
	if err != nil {
		return err
	}
	m, err := meta.Accessor(ev.Object)
	if err != nil {
		return err
	}
	rev, err := registry.ParseResourceVersion(m.GetResourceVersion())
	if err != nil {
		return err
	}
	c.metrics.eventsReceived.Inc()
	out := &event{
		typ: ev.Type, rv: rev, key: e.key, namespace: m.GetNamespace(),
		object: e.shared, indexed: e.indexed,
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if prev := c.objects.get(e.key); prev != nil {
		out.prev, out.prevIndexed = prev.obj, prev.indexed
	}
	if ev.Type == watch.Deleted {
		c.objects.delete(e.key)
	} else {
		c.objects.put(e)
	}
	c.window.push(out)
	c.advanceLocked(rev)
	c.dispatchLocked(out)
	return nil
}

// elementOf keys an object as etcd does.
func (c *resourceCache) elementOf(obj runtime.Object) (*element, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	return newElement(registry.KeyFor(c.res, m.GetNamespace(), m.GetName()), obj, c.res.Indexes, &c.stats.encodings), nil
}

// dispatchLocked hands e to every watcher whose scope it falls in, without
// blocking: a watcher whose buffer is full is ended instead.
func (c *resourceCache) dispatchLocked(e *event) {
	c.watchers.candidates(e, func(w *watcher) {
		select {
		case w.input <- e:
			c.stats.deliveries.Add(1)
		default:
			c.removeLocked(w, true)
		}
	})
	c.metrics.eventsDispatched.Inc()
}

// sendBookmarks gives every watcher that asked for bookmarks and is due one
// a BOOKMARK at the cache's resourceVersion. A full buffer skips it: a
// bookmark is a courtesy, not an event.
func (c *resourceCache) sendBookmarks() {
	now := c.clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ready {
		return
	}
	var bm *event
	c.watchers.each(func(w *watcher) {
		if !w.bookmarks || now.Before(w.nextBookmark) {
			return
		}
		if bm == nil {
			bm = bookmarkEvent(c.rv)
		}
		select {
		case w.input <- bm:
		default:
		}
		w.nextBookmark = w.bookmarkAfter(now, c.cfg.BookmarkFrequency)
	})
}
