package watchcache

import (
	"fmt"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"

	"minicp/registry"
)

// listBenchPods and listBenchNodes size the LIST benchmark: 10,000 pods
// spread over 100 nodes, as in docs/BENCHMARKS.md.
const (
	listBenchPods  = 10000
	listBenchNodes = 100
)

// BenchmarkList10000Pods compares, on the same data in the same run, a LIST
// of 10,000 pods from etcd (the Store) and from the cache, and a node-scoped
// LIST (spec.nodeName, 100 pods) from etcd, from the cache's node index, and
// from the cache scanning every pod. Storage level only: the apiserver's
// encoding is left out. The "-shared" cases are what the apiserver asks for
// plain JSON and protobuf LISTs: the cache's items, not copied into a
// PodList (the encoding of each item is then reused across LISTs; see
// e2e.BenchmarkList10000PodsOverHTTP for the whole request).
//
//	go test -run XXX -bench BenchmarkList10000Pods -count 5 ./watchcache/
func BenchmarkList10000Pods(b *testing.B) {
	h := startCache(b)
	h.createNamespace("default")
	createPodsConcurrently(b, h, listBenchPods, listBenchNodes)
	h.listPods("default", registry.ListOptions{}) // the cache has every pod
	onNode := fields.OneTermEqualSelector("spec.nodeName", "node-7")
	nodePred, err := registry.NewPredicate(podsRes, nil, onNode)
	if err != nil {
		b.Fatal(err)
	}
	rc := h.podCache()
	for _, bc := range []struct {
		name  string
		want  int
		store registry.Interface
		opts  registry.ListOptions
		scan  bool // cache, node selector evaluated on every pod
		// shared: the cache's items as they are (ListShared, what the
		// apiserver uses for JSON and protobuf), not copied into a PodList
		shared bool
	}{
		{name: "all/etcd", want: listBenchPods, store: h.store},
		{name: "all/etcd-RV0-serializable", want: listBenchPods, store: h.store, opts: registry.ListOptions{ResourceVersion: "0"}},
		{name: "all/cache-RV0", want: listBenchPods, store: h.cache, opts: registry.ListOptions{ResourceVersion: "0"}},
		{name: "all/cache-consistent", want: listBenchPods, store: h.cache},
		{name: "all/cache-RV0-shared", want: listBenchPods, opts: registry.ListOptions{ResourceVersion: "0"}, shared: true},
		{name: "all/cache-consistent-shared", want: listBenchPods, shared: true},
		{name: "node/etcd", want: listBenchPods / listBenchNodes, store: h.store, opts: registry.ListOptions{FieldSelector: onNode}},
		{name: "node/cache-index", want: listBenchPods / listBenchNodes, store: h.cache, opts: registry.ListOptions{ResourceVersion: "0", FieldSelector: onNode}},
		{name: "node/cache-scan", want: listBenchPods / listBenchNodes, scan: true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var n int
				switch {
				case bc.scan:
					list, err := rc.listFromMemory("", nodePred, false).typedList(podsRes)
					if err != nil {
						b.Fatal(err)
					}
					n = meta.LenList(list)
				case bc.shared:
					shared, _, err := h.cache.ListShared(h.ctx, podsRes, "", bc.opts)
					if err != nil || shared == nil {
						b.Fatalf("ListShared: %v %v", shared, err)
					}
					n = len(shared.Items)
				default:
					out, err := bc.store.List(h.ctx, podsRes, "", bc.opts)
					if err != nil {
						b.Fatal(err)
					}
					n = meta.LenList(out)
				}
				if n != bc.want {
					b.Fatalf("listed %d pods, want %d", n, bc.want)
				}
			}
		})
	}
}

// createPodsConcurrently creates n pods in "default", spread round-robin
// over nodes, with 8 writers.
func createPodsConcurrently(b *testing.B, h *harness, n, nodes int) {
	const writers = 8
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += writers {
				h.createPod("default", fmt.Sprintf("pod-%05d", i), fmt.Sprintf("node-%d", i%nodes))
			}
		}()
	}
	wg.Wait()
}
