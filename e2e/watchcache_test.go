package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"minicp/controlplane"
	"minicp/e2e/framework"
	"minicp/watchcache"
)

// etcdWatchers reads etcd's own count of its watchers (all members in this
// process; e2e tests run one stack at a time).
func etcdWatchers(t *testing.T) float64 {
	t.Helper()
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "etcd_debugging_mvcc_watcher_total" {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatal("etcd_debugging_mvcc_watcher_total not found in the default registry")
	return 0
}

// settledEtcdWatchers reads etcd's watcher gauge once it has held still
// for half a second (or after 10 s), so that watches being opened or torn
// down in the background are not counted half-way.
func settledEtcdWatchers(t *testing.T) float64 {
	t.Helper()
	n, same := etcdWatchers(t), 0
	for deadline := time.Now().Add(10 * time.Second); same < 5 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		if m := etcdWatchers(t); m == n {
			same++
		} else {
			n, same = m, 0
		}
	}
	return n
}

// cacheStatus returns /debug/watchcache's entry for resource, read through
// the apiserver as a learner reads it.
func cacheStatus(t *testing.T, s *framework.Stack, resource string) watchcache.ResourceStatus {
	t.Helper()
	resp, err := s.HTTP.Get(s.URL + "/debug/watchcache/" + resource)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rs watchcache.ResourceStatus
	if err := json.NewDecoder(resp.Body).Decode(&rs); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /debug/watchcache/%s: %d, %v", resource, resp.StatusCode, err)
	}
	return rs
}

// M8: however many clients watch pods, etcd serves one
// watch for pods: the cache's. Each client still gets every event, in
// order. With the cache off, each client watch is an etcd watch.
func TestAThousandPodWatchersCostOneEtcdWatcher(t *testing.T) {
	const watchers, writes = 1000, 20
	for _, cached := range []bool{true, false} {
		name := map[bool]string{true: "cache on: one etcd watch for pods", false: "cache off: one etcd watch per client"}[cached]
		t.Run(name, func(t *testing.T) {
			// The gauge is process-wide: wait for the watchers of stacks
			// stopped earlier to go, and for this stack's to come up.
			before := settledEtcdWatchers(t)
			s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
				c.WatchCache.Enabled = cached
				c.EnableGarbageCollector = false // its metadata watches would be counted with the test's
			}})
			ctx := framework.Context(t, 2*time.Minute)
			feeds := settledEtcdWatchers(t) - before
			if want := float64(cachedResources(s)); cached && feeds != want {
				// With the cache off, the stack's own informers (its
				// controllers') are etcd watchers too.
				t.Errorf("the stack opened %v etcd watchers, want %v: one per cached resource", feeds, want)
			}
			pods := s.ProtobufClientset(t).CoreV1().Pods("default")
			start, err := pods.List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			streams := make([]watch.Interface, watchers)
			for i := range streams {
				if streams[i], err = pods.Watch(ctx, metav1.ListOptions{ResourceVersion: start.ResourceVersion}); err != nil {
					t.Fatalf("watch %d: %v", i, err)
				}
				defer streams[i].Stop()
			}
			base := before + feeds
			framework.Eventually(t, framework.StateTimeout, "every client watch to be registered", func() bool {
				if cached {
					return cacheStatus(t, s, "pods").Watchers == watchers
				}
				return etcdWatchers(t)-base == watchers
			})
			extra := etcdWatchers(t) - base
			t.Logf("%d client watches on pods: %v etcd watchers for them, %v for the whole stack", watchers, extra, extra+feeds)
			if want := map[bool]float64{true: 0, false: watchers}[cached]; extra != want {
				t.Errorf("%d client watches opened %v etcd watchers, want %v", watchers, extra, want)
			}

			var want []string
			for i := range writes {
				p, err := pods.Create(ctx, nginxPod(fmt.Sprintf("p%02d", i)), metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, p.ResourceVersion)
			}
			var wg sync.WaitGroup
			errs := make(chan error, watchers)
			for i, w := range streams {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs <- expectResourceVersions(w, want, fmt.Sprintf("watcher %d", i))
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// cachedResources is how many resources the stack caches (each costs one
// etcd watch).
func cachedResources(s *framework.Stack) int {
	n := 0
	for _, rs := range s.ControlPlane.WatchCache().Status(context.Background()).Resources {
		if rs.Cached {
			n++
		}
	}
	return n
}

// expectResourceVersions reads ADDED events and checks they come exactly
// at the given resourceVersions, in order.
func expectResourceVersions(w watch.Interface, want []string, who string) error {
	timeout := time.After(30 * time.Second)
	for i, rv := range want {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("%s: closed after %d of %d events", who, i, len(want))
			}
			m, isObject := ev.Object.(metav1.Object)
			if ev.Type != watch.Added || !isObject || m.GetResourceVersion() != rv {
				return fmt.Errorf("%s: event %d is %s %T %v, want ADDED at %s (lost, duplicated or out of order)", who, i, ev.Type, ev.Object, objectID(ev.Object), rv)
			}
		case <-timeout:
			return fmt.Errorf("%s: got %d of %d events within 30s", who, i, len(want))
		}
	}
	return nil
}

// M8: a client that stops reading is cut off once its
// buffer (and the TCP buffers before it) fill up; a client that keeps up
// gets every event while it happens.
func TestASlowWatcherIsEndedWhileAFastOneKeepsUp(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.WatchCache.WatcherBufferSize = 10
		c.EnableGarbageCollector = false // its metadata watch on pods would be counted with the test's
	}})
	ctx := framework.Context(t, 2*time.Minute)
	cms := s.Clientset.CoreV1().ConfigMaps("default")
	start, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	url := s.ControlPlane.URL() + "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=" + start.ResourceVersion
	slow, err := s.HTTP.Get(url) // and never read, until the end
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Body.Close()
	fast, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: start.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Stop()
	framework.Eventually(t, framework.StateTimeout, "both watches registered", func() bool { return cacheStatus(t, s, "configmaps").Watchers == 2 })

	// 64 KiB objects: the slow client's socket buffers fill after a few dozen.
	const writes = 120
	big := strings.Repeat("x", 64<<10)
	var maxDelay time.Duration
	for i := range writes {
		written := time.Now()
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i)}, Data: map[string]string{"x": big}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := expectResourceVersions(fast, []string{cm.ResourceVersion}, "the fast watcher"); err != nil {
			t.Fatal(err)
		}
		maxDelay = max(maxDelay, time.Since(written))
	}
	t.Logf("the fast watcher got all %d events; slowest write-to-delivery %v", writes, maxDelay)
	if maxDelay > 2*time.Second {
		t.Errorf("the fast watcher waited up to %v for an event: the slow one held it back", maxDelay)
	}
	rs := cacheStatus(t, s, "configmaps")
	if rs.SlowWatchersEnded != 1 || rs.Watchers != 1 {
		t.Fatalf("/debug/watchcache: %d slow watchers ended, %d watchers left; want 1 and 1", rs.SlowWatchersEnded, rs.Watchers)
	}
	// The slow client now reads: some events, in order, then the end.
	events := 0
	scanner := bufio.NewScanner(slow.Body)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		events++
	}
	if events >= writes {
		t.Errorf("the slow watcher's stream held all %d events; it should have been ended", events)
	}
	if err := scanner.Err(); err != nil && err != io.EOF {
		t.Logf("slow stream ended with %v after %d events", err, events)
	}
}

// client-go v0.37's informers start in watch-list mode: their first
// request is a watch with sendInitialEvents, served from the cache, with
// no LIST at all; then they see every change.
func TestAnInformerSyncsFromTheCacheInWatchListModeAndSeesEveryChange(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, time.Minute)
	pods := s.Clientset.CoreV1().Pods("default")
	for i := range 3 {
		if _, err := pods.Create(ctx, nginxPod(fmt.Sprintf("before-%d", i)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	listsBefore := cacheStatus(t, s, "pods").ListsFromCache
	factory := informers.NewSharedInformerFactoryWithOptions(s.Clientset, 0, informers.WithNamespace("default"))
	informer := factory.Core().V1().Pods().Informer()
	var mu sync.Mutex
	var seen []string
	record := func(what string, obj any) {
		if pod, ok := obj.(*corev1.Pod); ok {
			mu.Lock()
			seen = append(seen, what+" "+pod.Name)
			mu.Unlock()
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { record("add", obj) },
		UpdateFunc: func(_, obj any) { record("update", obj) },
		DeleteFunc: func(obj any) { record("delete", obj) },
	}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	factory.Start(stop)
	defer func() { close(stop); factory.Shutdown() }()
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatal("informer did not sync")
	}
	if got := cacheStatus(t, s, "pods").ListsFromCache - listsBefore; got != 0 {
		t.Errorf("the informer caused %d LISTs; in watch-list mode it should list nothing", got)
	}
	if _, err := pods.Create(ctx, nginxPod("after"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Patch(ctx, "after", "application/merge-patch+json", []byte(`{"metadata":{"labels":{"v":"2"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "before-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The initial state comes as one batch whose order the informer does not
	// keep; what follows comes in order.
	want := "add before-0,add before-1,add before-2,add after,update after,delete before-0"
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		got := append([]string(nil), seen...)
		mu.Unlock()
		if len(got) >= 3 {
			slices.Sort(got[:3])
		}
		if strings.Join(got, ",") == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the informer's handler saw %q, want %q", strings.Join(got, ","), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// M8 (lab 04): a LIST at resourceVersion 0 takes whatever the
// cache holds, and a cache that is behind answers with old data; a LIST
// without resourceVersion is consistent, from the cache once it has caught
// up with etcd, or from etcd when it cannot.
func TestZeroListsCanBeStaleButConsistentListsNeverAre(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.WatchCache.TooLargeResourceVersionWait = 300 * time.Millisecond
	}})
	ctx := framework.Context(t, time.Minute)
	cms := s.Clientset.CoreV1().ConfigMaps("default")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The cache must hold "before" when it is paused: its etcd watch
	// delivers the write a moment after the create is acknowledged.
	framework.Eventually(t, framework.StateTimeout, "the cache to hold the first ConfigMap", func() bool {
		list, err := cms.List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		return err == nil && len(list.Items) == 1
	})
	resp, err := s.HTTP.Post(s.URL+"/debug/watchcache/configmaps/pause", "application/json", nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("pausing the cache: %v %v", resp.Status, err)
	}
	resp.Body.Close()
	after, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stale, err := cms.List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(stale.Items) != 1 || revision(t, stale.ResourceVersion) >= revision(t, after.ResourceVersion) {
		t.Errorf("RV=0 list: %d items at %s; want the stale [before], older than the write at %s", len(stale.Items), stale.ResourceVersion, after.ResourceVersion)
	}
	fresh, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(fresh.Items) != 2 || revision(t, fresh.ResourceVersion) < revision(t, after.ResourceVersion) {
		t.Errorf("RV=\"\" list: %d items at %s; want both, at %s or later", len(fresh.Items), fresh.ResourceVersion, after.ResourceVersion)
	}
	rs := cacheStatus(t, s, "configmaps")
	if !rs.Paused || rs.ConsistentFallback != 1 || rs.Lag <= 0 {
		t.Errorf("/debug/watchcache: paused %v, fallbacks %d, lag %d; want paused, 1, behind etcd", rs.Paused, rs.ConsistentFallback, rs.Lag)
	}
	resp, err = s.HTTP.Post(s.URL+"/debug/watchcache/configmaps/resume", "application/json", nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("resuming the cache: %v %v", resp.Status, err)
	}
	resp.Body.Close()
	framework.Eventually(t, framework.StateTimeout, "RV=0 list to catch up", func() bool {
		list, err := cms.List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		return err == nil && len(list.Items) == 2
	})
}

// /debug/watchcache and /metrics show what the cache does.
func TestTheCacheCanBeSeenInsideThroughDebugAndMetrics(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.EnableGarbageCollector = false // its metadata watch on pods would be counted with the test's
	}})
	ctx := framework.Context(t, time.Minute)
	pods := s.Clientset.CoreV1().Pods("default")
	w, err := pods.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	created, err := pods.Create(ctx, nginxPod("a"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, framework.StateTimeout, "the cache to see the pod", func() bool {
		return cacheStatus(t, s, "pods").ResourceVersion >= revision(t, created.ResourceVersion)
	})
	rs := cacheStatus(t, s, "pods")
	if !rs.Cached || !rs.Ready || rs.Objects != 1 || rs.Watchers != 1 || rs.EventsReceived < 1 || rs.Initializations != 1 ||
		rs.Window.Capacity != 5000 || rs.Window.LastEvent != revision(t, created.ResourceVersion) {
		t.Errorf("/debug/watchcache/pods = %+v", rs)
	}
	resp, err := s.HTTP.Get(s.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		`apiserver_watch_cache_events_received_total{group="",resource="pods"}`,
		`apiserver_watch_cache_events_dispatched_total{group="",resource="pods"}`,
		`apiserver_watch_cache_initializations_total{group="",resource="pods"}`,
		`apiserver_watch_cache_resource_version{group="",resource="pods"}`,
		`apiserver_registered_watchers{group="",kind="Pod",version="v1"}`,
		`apiserver_watch_cache_read_wait_seconds_bucket{group="",resource="pods"`,
		`etcd_debugging_mvcc_watcher_total`,
	} {
		if !strings.Contains(string(body), name) {
			t.Errorf("/metrics has no %s", name)
		}
	}
}

// objectID names an event's object for failure messages.
func objectID(obj any) string {
	if m, ok := obj.(metav1.Object); ok {
		return m.GetName() + "@" + m.GetResourceVersion()
	}
	return fmt.Sprintf("%T", obj)
}
