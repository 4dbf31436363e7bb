package watchcache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

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
	// store. Written only by New.
	caches map[*registry.Resource]*resourceCache

	// cancel ends every resourceCache's goroutines; wg waits for them.
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// closed is closed by Close, once.
	closed    chan struct{}
	closeOnce sync.Once
}

var (
	_ registry.Interface    = (*Cache)(nil)
	_ registry.SharedLister = (*Cache)(nil)
)

// New starts caching every resource of the table that cfg gives a window
// (Config.Sizes, Resource.WatchCacheSize, Config.DefaultSize): each starts listing and watching etcd at once, in the background
// (WaitReady waits for the first lists). Reads are sent to store until a
// resource's cache is ready. Close stops it all.
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
	c := &Cache{store: store, resources: resources, cfg: cfg, caches: map[*registry.Resource]*resourceCache{}, cancel: cancel, closed: make(chan struct{})}
	metrics := newCacheMetrics(cfg.Metrics)
	for _, res := range resources.All() {
		size := sizes[res]
		if size == 0 {
			continue
		}
		rc := newResourceCache(res, store, &c.cfg, metrics, size, c.closed)
		c.caches[res] = rc
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
	}
	return c, nil
}

// WaitReady blocks until every cached resource has completed its first
// list and opened its etcd watch, or ctx ends.
func (c *Cache) WaitReady(ctx context.Context) error {
	for _, rc := range c.caches {
		if err := rc.waitReady(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Close stops the cache, in this order:
//  1. new watches are refused (503) and waits for readiness give up;
//  2. every feed's etcd watch is cancelled and its goroutines end;
//  3. every client watch still open is ended (its result channel closes).
//
// Reads after Close go to the Storage. Close is safe to call more than once.
func (c *Cache) Close() {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.cancel()
		c.wg.Wait()
		for _, rc := range c.caches {
			rc.becomeUnready()
		}
	})
}

// cacheFor returns res's cache, or nil when res is served by the Storage.
func (c *Cache) cacheFor(res *registry.Resource) *resourceCache { return c.caches[res] }

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
