package watchcache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"minicp/registry"
)

// Storage is what the cache sits in front of: *registry.Store. Besides
// registry.Interface it tells the current revision of the etcd cluster
// holding a resource, cheaply (for consistent reads: with
// --etcd-servers-overrides, events count revisions of their own cluster),
// and can ask for watch progress notifications.
type Storage interface {
	registry.Interface
	CurrentRevision(ctx context.Context) (int64, error) // of the main cluster
	CurrentRevisionOf(ctx context.Context, res *registry.Resource) (int64, error)
	RequestWatchProgress(ctx context.Context) error
}

var _ Storage = (*registry.Store)(nil)

// Cache is the watch cache: registry.Interface with reads served from
// memory per the resourceVersion rules, and writes passed to the Storage.
type Cache struct {
	store     Storage
	resources *registry.Table
	cfg       Config
	// caches holds the cached resources; a resource whose window is 0 (or
	// every resource, with the cache disabled) is absent and served by
	// store. The map is never modified: adding or removing a resource
	// (TableChanged) stores a new one, under mu; readers load it without
	// a lock.
	caches atomic.Pointer[map[*registry.Resource]*resourceCache]
	// mu serializes the writers of caches (New's first caches and
	// TableChanged, which runs under the table's writer lock: lock order
	// table, then mu) and guards stops.
	mu sync.Mutex
	// stops ends one resource's goroutines (its context's cancel), for a
	// resource that leaves the table.
	stops   map[*registry.Resource]context.CancelFunc
	metrics *cacheMetrics

	// ctx is the parent of every resource's context; cancel ends every
	// resourceCache's goroutines; wg waits for them.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// closeOnce makes Close run once.
	closeOnce sync.Once
}

var (
	_ registry.Interface    = (*Cache)(nil)
	_ registry.SharedLister = (*Cache)(nil)
)

// New starts caching every resource of the table that cfg gives a window
// (Config.Sizes, Resource.WatchCacheSize, Config.DefaultSize): each starts listing and watching etcd at once, in the background
// (WaitReady waits for the first lists). Reads are sent to store until a
// resource's cache is ready. Resources added to the table later (custom
// resources) get a cache of their own when they are added, and lose it
// when they leave (TableChanged). Close stops it all.
func New(store Storage, resources *registry.Table, cfg Config) (*Cache, error) {
	if store == nil || resources == nil {
		return nil, errors.New("watchcache: a storage and a resource table are required")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	sizes, err := cfg.resolveSizes(resources)
	if err != nil {
		return nil, err
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Cache{store: store, resources: resources, cfg: cfg, stops: map[*registry.Resource]context.CancelFunc{},
		metrics: newCacheMetrics(cfg.Metrics), ctx: ctx, cancel: cancel}
	c.caches.Store(&map[*registry.Resource]*resourceCache{})
	// Subscribe first, so that no change is missed; a resource the table
	// dropped meanwhile is skipped (Contains).
	initial := resources.Subscribe(c)
	c.mu.Lock()
	defer c.mu.Unlock()
	caches := map[*registry.Resource]*resourceCache{}
	for res, rc := range *c.caches.Load() {
		caches[res] = rc
	}
	for _, res := range initial {
		if size := sizes[res]; size > 0 && resources.Contains(res) && caches[res] == nil {
			caches[res] = c.startLocked(res, size)
		}
	}
	c.caches.Store(&caches)
	return c, nil
}

// startLocked starts caching res with a window of size events. c.mu is held.
func (c *Cache) startLocked(res *registry.Resource, size int) *resourceCache {
	ctx, stop := context.WithCancel(c.ctx)
	c.stops[res] = stop
	// The resource's waits give up when it leaves the table or the cache closes.
	rc := newResourceCache(res, c.store, &c.cfg, c.metrics, size, ctx.Done())
	c.wg.Add(2)
	// The feed: the only writer of rc; ends when ctx does.
	go func() {
		defer c.wg.Done()
		rc.run(ctx)
	}()
	// Progress requests while readers wait; ends when ctx does.
	go func() {
		defer c.wg.Done()
		rc.requestProgress(ctx)
	}()
	return rc
}

// TableChanged implements registry.TableSubscriber: a resource added to
// the table starts its cache (listing in the background; reads go to
// etcd until it is ready), a resource removed stops its cache, whose
// client watches end (their clients re-watch and find the resource gone).
func (c *Cache) TableChanged(added, removed []*registry.Resource) {
	c.mu.Lock()
	defer c.mu.Unlock()
	caches := make(map[*registry.Resource]*resourceCache, len(*c.caches.Load())+len(added))
	for res, rc := range *c.caches.Load() {
		caches[res] = rc
	}
	for _, res := range removed {
		if stop := c.stops[res]; stop != nil {
			stop()
			delete(c.stops, res)
		}
		delete(caches, res)
	}
	for _, res := range added {
		if size := c.cfg.sizeFor(res); size > 0 && caches[res] == nil {
			caches[res] = c.startLocked(res, size)
		}
	}
	c.caches.Store(&caches)
}

// WaitReady blocks until every cached resource has completed its first
// list and opened its etcd watch, or ctx ends.
func (c *Cache) WaitReady(ctx context.Context) error {
	for _, rc := range *c.caches.Load() {
		if err := rc.waitReady(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Close stops the cache, in this order:
//  1. the cache stops following its table (registry.Table.Unsubscribe):
//     once that returns, no TableChanged runs or will run, so none starts
//     a cache after this;
//  2. new watches are refused (503) and waits for readiness give up;
//  3. every feed's etcd watch is cancelled and its goroutines end;
//  4. every client watch still open is ended (its result channel closes).
//
// Reads after Close go to the Storage. Close is safe to call more than once.
func (c *Cache) Close() {
	c.closeOnce.Do(func() {
		c.resources.Unsubscribe(c) // takes the table's lock: not under c.mu
		c.cancel()
		c.wg.Wait()
		for _, rc := range *c.caches.Load() {
			rc.becomeUnready()
		}
	})
}

// cacheFor returns res's cache, or nil when res is served by the Storage.
func (c *Cache) cacheFor(res *registry.Resource) *resourceCache { return (*c.caches.Load())[res] }

// Get implements registry.Interface.
func (c *Cache) Get(ctx context.Context, res *registry.Resource, namespace, name string, opts registry.GetOptions) (runtime.Object, error) {
	if rc := c.cacheFor(res); rc != nil {
		return rc.get(ctx, namespace, name, opts)
	}
	return c.store.Get(ctx, res, namespace, name, opts)
}

// List implements registry.Interface.
func (c *Cache) List(ctx context.Context, res *registry.Resource, namespace string, opts registry.ListOptions) (runtime.Object, error) {
	if rc := c.cacheFor(res); rc != nil {
		return rc.list(ctx, namespace, opts)
	}
	return c.store.List(ctx, res, namespace, opts)
}

// ListShared implements registry.SharedLister: a LIST answered from
// memory is the cache's own items, not copied into a typed list.
func (c *Cache) ListShared(ctx context.Context, res *registry.Resource, namespace string, opts registry.ListOptions) (*registry.SharedList, runtime.Object, error) {
	if rc := c.cacheFor(res); rc != nil {
		return rc.listShared(ctx, namespace, opts)
	}
	list, err := c.store.List(ctx, res, namespace, opts)
	return nil, list, err
}

// Watch implements registry.Interface. Events of a cached resource carry
// their object as a runtime.CacheableObject shared by every watcher (see
// Unwrap).
func (c *Cache) Watch(ctx context.Context, res *registry.Resource, namespace string, opts registry.ListOptions) (watch.Interface, error) {
	if rc := c.cacheFor(res); rc != nil {
		return rc.watch(ctx, namespace, opts)
	}
	return c.store.Watch(ctx, res, namespace, opts)
}

// Create implements registry.Interface: writes go to etcd.
func (c *Cache) Create(ctx context.Context, res *registry.Resource, namespace string, obj runtime.Object, opts registry.WriteOptions) (runtime.Object, error) {
	return c.store.Create(ctx, res, namespace, obj, opts)
}

// Update implements registry.Interface: writes go to etcd.
func (c *Cache) Update(ctx context.Context, res *registry.Resource, namespace, name string, opts registry.UpdateOptions, tryUpdate registry.UpdateFunc) (runtime.Object, bool, error) {
	return c.store.Update(ctx, res, namespace, name, opts, tryUpdate)
}

// Delete implements registry.Interface: writes go to etcd.
func (c *Cache) Delete(ctx context.Context, res *registry.Resource, namespace, name string, opts registry.DeleteOptions) (runtime.Object, error) {
	return c.store.Delete(ctx, res, namespace, name, opts)
}

// Pause holds back the etcd feed of one resource ("pods",
// "leases.coordination.k8s.io"), so that its cache goes stale on purpose:
// RV="0" reads then show old data, consistent reads wait and fall back to
// etcd. A lab instrument (docs/labs/04-list-semantics.md); upstream has no
// such switch.
func (c *Cache) Pause(resource string) error { return c.setPaused(resource, true) }

// Resume lets a paused feed go on; the cache catches up at once.
func (c *Cache) Resume(resource string) error { return c.setPaused(resource, false) }

func (c *Cache) setPaused(resource string, paused bool) error {
	res, err := c.resources.Parse(resource)
	if err != nil {
		return err
	}
	rc := c.cacheFor(res)
	if rc == nil {
		return fmt.Errorf("%s is not cached (--watch-cache=false or window size 0)", groupResource(res))
	}
	rc.setPaused(paused)
	return nil
}
