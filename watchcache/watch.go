package watchcache

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"

	"minicp/registry"
)

// resultBufferSize is how many events a watcher may have handed to its
// client (the apiserver) that it has not taken yet. A few let the apiserver
// see that more events wait and write them with one flush.
const resultBufferSize = 16

// watchPlan is how one WATCH starts, worked out from its options before
// the cache is locked (the rules are in doc.go).
type watchPlan struct {
	// initial: send the current state as ADDED events first; the watch
	// then starts at the cache's resourceVersion.
	initial     bool
	endBookmark bool // after the initial state, the initial-events-end BOOKMARK
	// from: without initial, the watch sends the changes after from; -1
	// means "from the cache's resourceVersion at registration".
	from int64
	// waitFor: the cache must reach this revision first (0: no wait).
	waitFor int64
	// consistent: waitFor is etcd's current revision; if the cache cannot
	// reach it in time the watch goes to etcd instead.
	consistent bool
}

// Watch serves a WATCH from the cache (doc.go has the rules). Errors that
// arise once the request is understood, such as a resourceVersion older
// than the window, are sent as an ERROR event, as upstream does.
func (c *resourceCache) watch(ctx context.Context, namespace string, opts registry.ListOptions) (watch.Interface, error) {
	if err := registry.ValidateListOptions(opts, true); err != nil {
		return nil, err
	}
	pred, err := registry.NewPredicate(c.res, opts.LabelSelector, opts.FieldSelector)
	if err != nil {
		return nil, err
	}
	plan, err := c.planWatch(ctx, opts)
	if err != nil {
		return nil, err
	}
	if err := c.waitReady(ctx); err != nil {
		return nil, err
	}
	if plan.waitFor > 0 {
		if err := c.waitFresh(ctx, plan.waitFor); err != nil {
			if plan.consistent {
				return c.store.Watch(ctx, c.res, namespace, opts)
			}
			return newStaticWatch(errorEvent(asStatus(err))), nil
		}
	}
	w := &watcher{
		cache: c, prefix: registry.KeyPrefix(c.res, namespace), namespace: namespace, pred: pred,
		bookmarks: opts.AllowWatchBookmarks, ctx: ctx, endBookmark: plan.endBookmark,
		input: make(chan *event, c.cfg.WatcherBufferSize), result: make(chan watch.Event, resultBufferSize), done: make(chan struct{}),
	}
	w.index, w.value = c.indexFor(pred)
	for {
		registered, tooOld := c.register(w, plan)
		if tooOld != nil {
			return newStaticWatch(errorEvent(tooOld)), nil
		}
		if registered {
			break
		}
		// The cache began re-listing after waitReady: wait for the new
		// list, then place the watch in the new window (often a 410).
		if err := c.waitReady(ctx); err != nil {
			return nil, err
		}
	}
	// The watch's goroutine: it owns w.result, closes it and unregisters
	// the watcher when the watch ends (Stop, ctx, overflow, re-list).
	go w.run()
	return w, nil
}

// planWatch reads the options. Only a watch with resourceVersion "" costs an
// etcd request: the count-only read of etcd's current revision, which the
// cache must reach before the watch starts.
func (c *resourceCache) planWatch(ctx context.Context, opts registry.ListOptions) (watchPlan, error) {
	rv, err := registry.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return watchPlan{}, err
	}
	plan := watchPlan{from: rv}
	switch {
	case opts.SendInitialEvents != nil && *opts.SendInitialEvents:
		plan.initial, plan.endBookmark, plan.waitFor = true, opts.AllowWatchBookmarks, rv
	case opts.SendInitialEvents != nil: // false: changes only
		if opts.ResourceVersion == "0" {
			plan.from = -1
		}
	default: // "" and "0" send the state first; "N" the changes after N
		plan.initial = opts.ResourceVersion == "" || opts.ResourceVersion == "0"
	}
	if opts.ResourceVersion == "" {
		if plan.waitFor, err = c.store.CurrentRevisionOf(ctx, c.res); err != nil {
			return watchPlan{}, err
		}
		plan.consistent = true
		if !plan.initial {
			plan.from = plan.waitFor
		}
	}
	return plan, nil
}

// register fixes where w starts and adds it to the index, in one critical
// section with respect to run: every later event goes to w's buffer, every
// earlier one is in w.initial or w.interval. It returns false when the
// cache is not ready (re-listing), and the 410 of a start older than the
// window.
func (c *resourceCache) register(w *watcher, plan watchPlan) (bool, *errors.StatusError) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ready {
		return false, nil
	}
	switch {
	case plan.initial:
		w.startRV = c.rv
		if w.index >= 0 {
			w.initial = c.objects.inIndex(w.index, w.value, w.prefix)
		} else {
			w.initial = c.objects.withPrefix(w.prefix)
		}
	case plan.from < 0:
		w.startRV = c.rv
	default:
		w.startRV = plan.from
		interval, ok := c.window.after(plan.from)
		if !ok {
			return false, registry.WatchTooOld(plan.from, c.window.floor+1)
		}
		w.interval = interval
	}
	if deadline, ok := w.ctx.Deadline(); ok {
		w.deadline = c.clock.Now().Add(time.Until(deadline))
	}
	w.nextBookmark = w.bookmarkAfter(c.clock.Now(), c.cfg.BookmarkFrequency)
	w.registered = true
	c.watchers.add(w)
	c.metrics.watchers.Inc()
	return true, nil
}

// asStatus returns err as a StatusError (every error of the cache is one).
func asStatus(err error) *errors.StatusError {
	if s, ok := err.(*errors.StatusError); ok {
		return s
	}
	return errors.NewInternalError(err)
}
