package controlplane

import (
	"context"
	"fmt"
	"time"

	"minicp/watchcache"
)

// watchCacheReadyTimeout bounds how long start-up waits for the watch
// cache's first lists; a cache still listing after it serves its reads from
// etcd until it is ready, and start-up goes on.
const watchCacheReadyTimeout = 10 * time.Second

// startWatchCache puts the watch cache in front of the registry and waits
// for its first list of every resource, so that the apiserver serves reads
// from memory from its first request. With --watch-cache=false the cache
// passes every request to etcd (and /debug/watchcache says so).
func (cp *ControlPlane) startWatchCache(ctx context.Context) error {
	cfg := cp.cfg.WatchCache
	if cfg.Logger == nil {
		cfg.Logger = cp.logger
	}
	cache, err := watchcache.New(cp.store, cp.cfg.Resources, cfg)
	if err != nil {
		return err
	}
	cp.cache = cache
	waitCtx, cancel := context.WithTimeout(ctx, watchCacheReadyTimeout)
	defer cancel()
	if err := cache.WaitReady(waitCtx); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("waiting for the watch cache's first lists: %w", ctx.Err())
		}
		cp.logger.Warn("the watch cache has not listed every resource yet; reads go to etcd until it has", "after", watchCacheReadyTimeout, "err", err)
	}
	return nil
}

// WatchCache is the cache the apiserver reads through.
func (cp *ControlPlane) WatchCache() *watchcache.Cache { return cp.cache }
