package registry_test

import (
	"context"
	"testing"
	"time"

	"minicp/embedetcd"
	"minicp/internal/storagetest"
	"minicp/registry"
)

// The storage conformance suite against etcd itself: every read goes to
// etcd. watchcache runs the same suite against the cache in front of it.
func TestStoreConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storagetest.Harness {
		cfg := embedetcd.NewConfig()
		cfg.DataDir = t.TempDir()
		cfg.ClientPort, cfg.PeerPort = 0, 0
		cfg.UnsafeNoFsync = true
		cfg.TickMs, cfg.ElectionMs = 10, 100
		cfg.WatchProgressNotifyInterval = storagetest.BookmarkEvery
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cluster, err := embedetcd.Start(ctx, cfg)
		if err != nil {
			t.Fatalf("starting etcd: %v", err)
		}
		t.Cleanup(func() {
			if err := cluster.Close(); err != nil {
				t.Errorf("closing etcd: %v", err)
			}
		})
		resources := registry.NewBuiltinTable()
		store, err := registry.NewStore(cluster.Client(), resources, registry.Options{TooLargeResourceVersionWait: storagetest.TooLargeWait})
		if err != nil {
			t.Fatal(err)
		}
		return storagetest.Harness{Storage: store, Resources: resources, Etcd: cluster.Client()}
	})
}
