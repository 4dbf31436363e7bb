package controlplane

import (
	"context"
	"fmt"

	"minicp/watchcache"
)

// startWatchCache puts the watch cache in front of the registry and waits
// for its first list of every resource, so that the apiserver serves reads
// from memory from its first request. With --watch-cache=false the cache
// passes every request to etcd (and /debug/watchcache says so).
func (cp *ControlPlane) startWatchCache(ctx context.Context) error {
	cfg := cp.cfg.WatchCache
	if cfg.Logger == nil {
		cfg.Logger = cp.logger
	}
	cache, err := watchcache.New(cp.store, cfg)
	if err != nil {
		return err
	}
	cp.cache = cache
	if err := cache.WaitReady(ctx); err != nil {
		return fmt.Errorf("waiting for the watch cache's first lists: %w", err)
	}
	return nil
}

// WatchCache is the cache the apiserver reads through.
func (cp *ControlPlane) WatchCache() *watchcache.Cache { return cp.cache }
