package watchcache

import (
	"testing"

	"minicp/internal/storagetest"
)

// The storage conformance suite against the cache: the same tests the
// etcd-backed Store passes (kinds/conformance_test.go).
func TestCacheConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storagetest.Harness {
		h := startCache(t, func(cfg *Config) {
			cfg.Sizes = map[string]int{"pods": storagetest.PodWindow}
		})
		return storagetest.Harness{Storage: h.cache, Resources: testResources, Etcd: h.etcd}
	})
}
