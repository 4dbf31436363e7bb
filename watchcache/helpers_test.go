package watchcache

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"minicp/internal/storagetest"
	"minicp/internal/testetcd"
	"minicp/kinds"
	"minicp/registry"
)

// harness is a cache on a Store on an embedded etcd of its own.
type harness struct {
	t     testing.TB
	etcd  *clientv3.Client
	store *registry.Store
	cache *Cache
	ctx   context.Context
}

// startCache starts etcd, a Store and a cache with test-friendly settings
// (short waits, frequent bookmarks), adjusted by configure, and waits for
// the cache's first lists. Everything stops with the test.
func startCache(t testing.TB, configure ...func(*Config)) *harness {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cluster := testetcd.Start(t)
	store, err := registry.NewStore(cluster.Client(), testResources, registry.Options{TooLargeResourceVersionWait: storagetest.TooLargeWait})
	if err != nil {
		t.Fatal(err)
	}
	cfg := NewConfig()
	cfg.TooLargeResourceVersionWait = storagetest.TooLargeWait
	cfg.BookmarkFrequency = storagetest.BookmarkEvery
	for _, f := range configure {
		f(&cfg)
	}
	cache, err := New(store, testResources, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cache.Close) // runs before etcd's Close (cleanups run last-in first-out)
	if err := cache.WaitReady(ctx); err != nil {
		t.Fatalf("cache not ready: %v", err)
	}
	return &harness{t: t, etcd: cluster.Client(), store: store, cache: cache, ctx: ctx}
}

var (
	podsRes       = mustLookup("pods")
	namespacesRes = mustLookup("namespaces")
)

// testResources is the table the package's tests serve.
var testResources = kinds.NewTable()

func mustLookup(name string) *registry.Resource {
	res, err := testResources.Parse(name)
	if err != nil {
		panic(err)
	}
	return res
}

func (h *harness) createNamespace(name string) {
	h.t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := h.store.Create(h.ctx, namespacesRes, "", ns, registry.WriteOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) createPod(namespace, name, node string) *corev1.Pod {
	h.t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
	}
	out, err := h.cache.Create(h.ctx, podsRes, namespace, pod, registry.WriteOptions{})
	if err != nil {
		h.t.Fatalf("creating pod %s: %v", name, err)
	}
	return out.(*corev1.Pod)
}

// touchPod rewrites a pod's label, making one MODIFIED event.
func (h *harness) touchPod(namespace, name, value string) *corev1.Pod {
	h.t.Helper()
	out, _, err := h.cache.Update(h.ctx, podsRes, namespace, name, registry.UpdateOptions{}, func(cur runtime.Object) (runtime.Object, error) {
		cur.(*corev1.Pod).Labels["touch"] = value
		return cur, nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return out.(*corev1.Pod)
}

// podCache returns the resourceCache of pods, for looking inside.
func (h *harness) podCache() *resourceCache { return h.cache.cacheFor(podsRes) }

// nextEvent reads one event (unwrapped), failing after 10 s.
func nextEvent(t testing.TB, w watch.Interface) (watch.Event, bool) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if ok {
			ev.Object = Unwrap(ev.Object)
		}
		return ev, ok
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return watch.Event{}, false
}
