package watchcache

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"minicp/registry"
)

func (h *harness) listPods(namespace string, opts registry.ListOptions) *corev1.PodList {
	h.t.Helper()
	out, err := h.cache.List(h.ctx, podsRes, namespace, opts)
	if err != nil {
		h.t.Fatalf("list %+v: %v", opts, err)
	}
	return out.(*corev1.PodList)
}

func (h *harness) watchPods(namespace string, opts registry.ListOptions) watch.Interface {
	h.t.Helper()
	w, err := h.cache.Watch(h.ctx, podsRes, namespace, opts)
	if err != nil {
		h.t.Fatalf("watch %+v: %v", opts, err)
	}
	h.t.Cleanup(w.Stop)
	return w
}

func rvOf(t testing.TB, obj any) int64 {
	t.Helper()
	var s string
	switch o := obj.(type) {
	case metav1.Object:
		s = o.GetResourceVersion()
	case metav1.ListInterface:
		s = o.GetResourceVersion()
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", s, err)
	}
	return n
}

// M8: a LIST at resourceVersion 0
// answers from memory without asking etcd, so it can be stale; a LIST
// without resourceVersion never is: it waits for the cache to reach etcd's
// revision, and falls back to etcd when it cannot.
func TestAPausedCacheServesStaleZeroListsButNeverStaleConsistentLists(t *testing.T) {
	h := startCache(t)
	h.createNamespace("default")
	h.createPod("default", "before", "")
	h.listPods("default", registry.ListOptions{}) // the cache is current
	if err := h.cache.Pause("pods"); err != nil {
		t.Fatal(err)
	}
	after := h.createPod("default", "after", "")

	stale := h.listPods("default", registry.ListOptions{ResourceVersion: "0"})
	if len(stale.Items) != 1 || stale.Items[0].Name != "before" || rvOf(t, stale) >= rvOf(t, after) {
		t.Fatalf("RV=0 list of a paused cache = %d items at %s, want the stale [before] older than %s", len(stale.Items), stale.ResourceVersion, after.ResourceVersion)
	}
	fresh := h.listPods("default", registry.ListOptions{})
	if len(fresh.Items) != 2 || rvOf(t, fresh) < rvOf(t, after) {
		t.Fatalf("consistent list of a paused cache = %d items at %s, want both pods at %s or later", len(fresh.Items), fresh.ResourceVersion, after.ResourceVersion)
	}
	if got := value(h.podCache().metrics.consistentFromEtcd); got != 1 {
		t.Errorf("consistent lists that fell back to etcd = %d, want 1", got)
	}
	if err := h.cache.Resume("pods"); err != nil {
		t.Fatal(err)
	}
	h.listPods("default", registry.ListOptions{}) // caught up again: served from memory
	if got := value(h.podCache().metrics.consistentFromCache); got < 2 {
		t.Errorf("consistent lists served from the cache = %d, want at least 2", got)
	}
	if got := h.listPods("default", registry.ListOptions{ResourceVersion: "0"}); len(got.Items) != 2 {
		t.Errorf("RV=0 list after resume has %d items, want 2", len(got.Items))
	}
}

// etcd's revision is global: after a write to another resource, a
// consistent read of an idle resource needs a progress notification to
// know nothing of its own changed. It must not wait for the timeout.
func TestConsistentListOfAnIdleResourceCatchesUpThroughProgressNotifications(t *testing.T) {
	h := startCache(t, func(c *Config) { c.TooLargeResourceVersionWait = time.Minute })
	h.createNamespace("default")
	cms := mustLookup("configmaps")
	for i := range 5 {
		h.createPod("default", fmt.Sprintf("p%d", i), "")
	}
	now, err := h.store.CurrentRevision(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := h.cache.List(h.ctx, cms, "default", registry.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("consistent list of idle configmaps took %v", took)
	}
	if got := rvOf(t, out.(*corev1.ConfigMapList)); got < now {
		t.Errorf("list at %d, older than etcd's revision %d at the request", got, now)
	}
	rc := h.cache.cacheFor(cms)
	if value(rc.metrics.consistentFromCache) != 1 || value(rc.metrics.consistentFromEtcd) != 0 {
		t.Errorf("served from cache %d, fell back %d; want 1, 0", value(rc.metrics.consistentFromCache), value(rc.metrics.consistentFromEtcd))
	}
}

// M6: the window moves on; a watch from before it gets
// 410 with the oldest resourceVersion it could have used.
func TestWatchFromBeforeTheWindowGets410NamingTheWindowFloor(t *testing.T) {
	h := startCache(t, func(c *Config) { c.Sizes = map[string]int{"pods": 5} })
	h.createNamespace("default")
	first := h.createPod("default", "a", "")
	var pushed []*corev1.Pod
	for i := range 8 {
		pushed = append(pushed, h.touchPod("default", "a", strconv.Itoa(i)))
	}
	h.listPods("default", registry.ListOptions{}) // the cache has every event
	floor := rvOf(t, pushed[len(pushed)-6])       // the 6th newest was evicted last
	w := h.watchPods("default", registry.ListOptions{ResourceVersion: first.ResourceVersion})
	ev, _ := nextEvent(t, w)
	status, ok := ev.Object.(*metav1.Status)
	want := fmt.Sprintf("too old resource version: %s (%d)", first.ResourceVersion, floor)
	if ev.Type != watch.Error || !ok || status.Code != http.StatusGone || status.Message != want {
		t.Fatalf("got %s %+v, want ERROR 410 %q", ev.Type, ev.Object, want)
	}
	ok2 := h.watchPods("default", registry.ListOptions{ResourceVersion: strconv.FormatInt(floor, 10)})
	for _, p := range pushed[len(pushed)-5:] {
		ev, _ := nextEvent(t, ok2)
		if rvOf(t, ev.Object) != rvOf(t, p) {
			t.Fatalf("watch from the floor: event at %d, want %d", rvOf(t, ev.Object), rvOf(t, p))
		}
	}
}

// M8: a watcher that cannot keep up is ended; the others
// get every event, in order, and the cache does not wait for it.
func TestASlowWatcherIsEndedWhileOthersGetEveryEvent(t *testing.T) {
	h := startCache(t, func(c *Config) { c.WatcherBufferSize = 5 })
	h.createNamespace("default")
	start := h.listPods("default", registry.ListOptions{}).ResourceVersion
	slow := h.watchPods("default", registry.ListOptions{ResourceVersion: start})
	fast := h.watchPods("default", registry.ListOptions{ResourceVersion: start})
	const n = 40
	fastEvents := make(chan watch.Event, n)
	go func() { // a client that keeps up
		for ev := range fast.ResultChan() {
			ev.Object = Unwrap(ev.Object)
			fastEvents <- ev
		}
		close(fastEvents)
	}()
	// The fast client reads each event before the next write, so it is
	// never more than one event behind, however loaded the machine is; the
	// slow one reads nothing and overflows its buffer of 5.
	for i := range n {
		rv := rvOf(t, h.createPod("default", fmt.Sprintf("p%02d", i), ""))
		ev, ok := <-fastEvents
		if !ok || ev.Type != watch.Added || rvOf(t, ev.Object) != rv {
			t.Fatalf("fast watcher, event %d: %s at %v, want ADDED at %d", i, ev.Type, ev.Object, rv)
		}
	}
	var received int
	for {
		_, ok := nextEvent(t, slow)
		if !ok {
			break
		}
		received++
	}
	if received >= n {
		t.Errorf("the slow watcher got all %d events; it should have been ended", received)
	}
	rc := h.podCache()
	if got := value(rc.metrics.terminated); got != 1 {
		t.Errorf("watchers ended for being slow = %d, want 1", got)
	}
	rc.mu.RLock()
	defer rc.mu.RUnlock()
	if rc.watchers.count != 1 {
		t.Errorf("%d watchers registered, want only the fast one", rc.watchers.count)
	}
}

// Every watcher of an event gets the same shared object (encoded once).
func TestWatchersShareEachEventsObject(t *testing.T) {
	h := startCache(t)
	h.createNamespace("default")
	start := h.listPods("default", registry.ListOptions{}).ResourceVersion
	w1 := h.watchPods("", registry.ListOptions{ResourceVersion: start})
	w2 := h.watchPods("default", registry.ListOptions{ResourceVersion: start})
	h.createPod("default", "a", "")
	e1, e2 := <-w1.ResultChan(), <-w2.ResultChan()
	if _, ok := e1.Object.(*cachingObject); !ok || e1.Object != e2.Object {
		t.Errorf("watchers got %T %p and %T %p, want one shared *cachingObject", e1.Object, e1.Object, e2.Object, e2.Object)
	}
}

// A kubelet lists and watches the pods of its node: both use the
// spec.nodeName index, and a node's watcher is not woken by other nodes'.
func TestNodeScopedListsAndWatchesUseTheNodeIndex(t *testing.T) {
	h := startCache(t)
	h.createNamespace("default")
	h.createNamespace("other")
	onNode := registry.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", "node-1")}
	before := float64(value(h.podCache().metrics.lists["spec.nodeName"]))
	w := h.watchPods("", registry.ListOptions{ResourceVersion: h.listPods("", registry.ListOptions{}).ResourceVersion, FieldSelector: onNode.FieldSelector})
	h.createPod("default", "a", "node-1")
	h.createPod("default", "b", "node-2")
	h.createPod("other", "c", "node-1")
	list := h.listPods("", onNode)
	if len(list.Items) != 2 || list.Items[0].Name != "a" || list.Items[1].Name != "c" {
		t.Errorf("node-1 list = %v, want a, c", list.Items)
	}
	if got := float64(value(h.podCache().metrics.lists["spec.nodeName"])) - before; got != 1 {
		t.Errorf("apiserver_cache_list_total{index=spec.nodeName} grew by %v, want 1", got)
	}
	for _, name := range []string{"a", "c"} {
		ev, _ := nextEvent(t, w)
		if m, _ := meta.Accessor(ev.Object); ev.Type != watch.Added || m.GetName() != name {
			t.Fatalf("node-1 watch: got %s %v, want ADDED %s", ev.Type, ev.Object, name)
		}
	}
	rc := h.podCache()
	if got := rc.stats.deliveries.Load(); got != 2 {
		t.Errorf("deliveries = %d, want 2: the node-1 watcher must not be handed node-2's pod", got)
	}
}

// A re-list (here: the cache's etcd watch ends) ends every client watch,
// counts the re-initialisation, and restarts the window.
func TestReinitialisationEndsEveryWatchAndRestartsTheWindow(t *testing.T) {
	// Room for every resource's feed and its re-list's, so that no feed waits.
	feeds := make(chan watch.Interface, 2*len(testResources.All())+2)
	h := startCache(t)
	h.cache.Close()
	// Same stack, but the cache's store hands each feed's watch to the test.
	cache, err := New(&feedSpy{Store: h.store, feeds: feeds}, testResources, h.cache.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cache.Close)
	h.cache = cache
	if err := cache.WaitReady(h.ctx); err != nil {
		t.Fatal(err)
	}
	h.createNamespace("default")
	a := h.createPod("default", "a", "")
	h.createPod("default", "b", "") // so that the re-list's revision is past a's
	h.listPods("default", registry.ListOptions{})
	client := h.watchPods("default", registry.ListOptions{ResourceVersion: a.ResourceVersion, AllowWatchBookmarks: true})
	before := float64(value(h.podCache().metrics.initializations))

	var podFeed watch.Interface
	for podFeed == nil {
		select {
		case f := <-feeds:
			if f.(*spiedWatch).res == podsRes {
				podFeed = f
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no pod feed")
		}
	}
	podFeed.Stop()
	for {
		ev, ok := nextEvent(t, client)
		if !ok {
			break
		}
		if m, _ := meta.Accessor(ev.Object); ev.Type != watch.Bookmark && (ev.Type != watch.Added || m.GetName() != "b") {
			t.Fatalf("client watch got %s, want ADDED b, bookmarks, then the end of the watch", ev.Type)
		}
	}
	rc := h.podCache()
	deadline := time.Now().Add(10 * time.Second)
	for value(rc.metrics.initializations) < 2 || !rc.isReady() {
		if time.Now().After(deadline) {
			t.Fatal("the cache did not re-list")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := float64(value(rc.metrics.initializations)) - before; got != 1 {
		t.Errorf("apiserver_watch_cache_initializations_total grew by %v, want 1", got)
	}
	if rs := rc.status(); rs.Reinitializations != 1 || rs.LastReinitReason != "etcd watch closed" {
		t.Errorf("status says %d re-initialisations, reason %q", rs.Reinitializations, rs.LastReinitReason)
	}
	again := h.watchPods("default", registry.ListOptions{ResourceVersion: a.ResourceVersion})
	if ev, _ := nextEvent(t, again); ev.Type != watch.Error || !apierrors.IsResourceExpired(apierrors.FromObject(ev.Object)) {
		t.Errorf("watch from before the re-list: got %s, want ERROR 410: the window restarted", ev.Type)
	}
}

// feedSpy is the Store, except that it hands the test every watch it opens
// (the cache's feeds), so the test can break one.
type feedSpy struct {
	*registry.Store
	feeds chan watch.Interface
}

type spiedWatch struct {
	watch.Interface
	res *registry.Resource
}

func (s *feedSpy) Watch(ctx context.Context, res *registry.Resource, namespace string, opts registry.ListOptions) (watch.Interface, error) {
	w, err := s.Store.Watch(ctx, res, namespace, opts)
	if err == nil {
		s.feeds <- &spiedWatch{w, res}
	}
	return w, err
}
