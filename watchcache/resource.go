package watchcache

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"

	"minicp/registry"
	"minicp/reqtrace"
)

// resourceCache caches one resource. See doc.go for which goroutine owns
// what and the lock order.
type resourceCache struct {
	res     *registry.Resource
	store   Storage
	cfg     *Config
	clock   clock.WithTicker
	log     *slog.Logger
	metrics *resourceMetrics
	stats   stats

	// waiting counts readers waiting for the cache to reach a revision;
	// while it is positive, requestProgress asks etcd for progress
	// notifications. kick (capacity 1) wakes requestProgress when a wait
	// starts; it is never closed.
	waiting atomic.Int32
	kick    chan struct{}
	// closed is closed by Cache.Close; waits for readiness give up on it.
	closed <-chan struct{}

	// mu guards everything below. See doc.go.
	mu sync.RWMutex
	// ready is true between a successful list and the end of the watch
	// that follows it. readyCh is closed when ready becomes true and
	// replaced by a new channel when it becomes false.
	ready   bool
	readyCh chan struct{}
	// rv is the revision up to which the cache has applied every event of
	// the resource; rvChanged is closed and replaced each time rv grows.
	rv        int64
	rvChanged chan struct{}
	objects   *objectStore
	window    *ring
	watchers  watcherIndex
	// paused holds back the etcd feed (a lab instrument: the cache goes
	// stale on purpose); resumed is closed when it is lifted.
	paused  bool
	resumed chan struct{}
}

// stats are the figures /debug/watchcache shows that have no Prometheus
// metric upstream; the others it reads from the resource's metrics.
type stats struct {
	deliveries     atomic.Int64 // events placed in watchers' buffers (one per watcher per event)
	encodings      atomic.Int64 // event objects encoded (once per media type)
	getServed      atomic.Int64 // GETs answered from memory
	lastInitReason atomic.Value // string: why the last re-list happened
}

func newResourceCache(res *registry.Resource, store Storage, cfg *Config, metrics *cacheMetrics, capacity int, closed <-chan struct{}) *resourceCache {
	c := &resourceCache{
		res:       res,
		store:     store,
		cfg:       cfg,
		clock:     cfg.Clock,
		log:       cfg.Logger.With("resource", groupResource(res)),
		metrics:   metrics.forResource(res, capacity),
		kick:      make(chan struct{}, 1),
		closed:    closed,
		readyCh:   make(chan struct{}),
		rvChanged: make(chan struct{}),
		objects:   newObjectStore(len(res.Indexes)),
		window:    newRing(capacity),
		watchers:  newWatcherIndex(len(res.Indexes)),
		resumed:   make(chan struct{}),
	}
	c.stats.lastInitReason.Store("")
	return c
}

// indexFor returns the index a LIST or WATCH selecting with pred reads,
// and the value it requires: the first of the resource's indexes whose
// field the selector requires to equal one value. -1 when none is.
func (c *resourceCache) indexFor(pred registry.Predicate) (int, string) {
	for i, ix := range c.res.Indexes {
		if value, ok := pred.RequiresExactField(ix.Field); ok {
			return i, value
		}
	}
	return -1, ""
}

// isReady reports whether the cache may answer reads.
func (c *resourceCache) isReady() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.ready
}

// waitReady blocks until the cache is ready, ctx ends (503), or the cache
// is closed (503).
func (c *resourceCache) waitReady(ctx context.Context) error {
	for {
		c.mu.RLock()
		ready, ch := c.ready, c.readyCh
		c.mu.RUnlock()
		if ready {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return apierrors.NewServiceUnavailable(fmt.Sprintf("the watch cache for %s is not initialized yet: %v", groupResource(c.res), ctx.Err()))
		case <-c.closed:
			return apierrors.NewServiceUnavailable(fmt.Sprintf("the watch cache for %s is shutting down", groupResource(c.res)))
		}
	}
}

// waitFresh blocks until the cache has applied every event up to rev, for
// at most Config.TooLargeResourceVersionWait; then it fails with upstream's
// 504 "Too large resource version" (Retry-After 1). The time spent is
// apiserver_watch_cache_read_wait_seconds.
func (c *resourceCache) waitFresh(ctx context.Context, rev int64) error {
	c.mu.RLock()
	cur, ch := c.rv, c.rvChanged
	c.mu.RUnlock()
	if cur >= rev {
		return nil
	}
	// The request's phases (Minicp-Phases, slow-request log) charge this
	// wait to the cache, not to storage.
	defer reqtrace.From(ctx).Begin(reqtrace.CacheWait)()
	start := c.clock.Now()
	defer func() { c.metrics.readWait.Observe(c.clock.Since(start).Seconds()) }()
	c.waiting.Add(1)
	defer c.waiting.Add(-1)
	select {
	case c.kick <- struct{}{}:
	default: // requestProgress is already awake
	}
	timeout := c.clock.NewTimer(c.cfg.TooLargeResourceVersionWait)
	defer timeout.Stop()
	for {
		select {
		case <-ch:
		case <-timeout.C():
			c.mu.RLock()
			cur = c.rv
			c.mu.RUnlock()
			return registry.TooLargeResourceVersion(rev, cur)
		case <-ctx.Done():
			return apierrors.NewTimeoutError(fmt.Sprintf("waiting for the watch cache to reach resourceVersion %d: %v", rev, ctx.Err()), 0)
		}
		c.mu.RLock()
		cur, ch = c.rv, c.rvChanged
		c.mu.RUnlock()
		if cur >= rev {
			return nil
		}
	}
}

// advanceLocked moves the cache's resourceVersion to rev and wakes the
// readers waiting for it.
func (c *resourceCache) advanceLocked(rev int64) {
	if rev <= c.rv {
		return
	}
	c.rv = rev
	close(c.rvChanged)
	c.rvChanged = make(chan struct{})
	c.metrics.resourceVersion.Set(float64(rev % 1e15))
}

// waitWhilePaused holds the feed while the cache is paused. It returns
// false when ctx ends first.
func (c *resourceCache) waitWhilePaused(ctx context.Context) bool {
	c.mu.RLock()
	paused, resumed := c.paused, c.resumed
	c.mu.RUnlock()
	if !paused {
		return true
	}
	select {
	case <-resumed:
		return true
	case <-ctx.Done():
		return false
	}
}

// setPaused pauses or resumes the feed.
func (c *resourceCache) setPaused(paused bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if paused == c.paused {
		return
	}
	c.paused = paused
	if paused {
		c.resumed = make(chan struct{})
	} else {
		close(c.resumed)
	}
	c.log.Info("watch cache feed "+map[bool]string{true: "paused", false: "resumed"}[paused], "resourceVersion", c.rv)
}
