package kinds_test

import (
	"testing"

	"minicp/embedetcd"
	"minicp/internal/storagetest"
	"minicp/internal/testetcd"
	"minicp/kinds"
	"minicp/registry"
)

// The storage conformance suite against etcd itself, over every built-in
// kind (which is why it lives here: registry's own tests cannot import
// this package): every read goes to
// etcd. watchcache runs the same suite against the cache in front of it.
func TestStoreConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storagetest.Harness {
		cluster := testetcd.Start(t, func(cfg *embedetcd.Config) {
			cfg.WatchProgressNotifyInterval = storagetest.BookmarkEvery
		})
		resources := kinds.NewTable()
		store, err := registry.NewStore(cluster.Client(), resources, registry.Options{TooLargeResourceVersionWait: storagetest.TooLargeWait})
		if err != nil {
			t.Fatal(err)
		}
		return storagetest.Harness{Storage: store, Resources: resources, Etcd: cluster.Client()}
	})
}
