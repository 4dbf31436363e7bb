package watchcache

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"minicp/registry"
)

// M6, M8: the explanation of a watch start is the
// watch's own decision. Each case is checked against a real watch from the
// same resourceVersion: 410 with the same message, or the same number of
// replayed events.
func TestExplainWatchGivesTheDecisionARealWatchMakes(t *testing.T) {
	h := startCache(t, func(c *Config) { c.Sizes = map[string]int{"pods": 5} })
	h.createNamespace("default")
	first := h.createPod("default", "a", "")
	var pushed []*corev1.Pod
	for i := range 8 {
		pushed = append(pushed, h.touchPod("default", "a", strconv.Itoa(i)))
	}
	h.listPods("default", registry.ListOptions{}) // the cache has every event
	floor := rvOf(t, pushed[len(pushed)-6])
	newest := rvOf(t, pushed[len(pushed)-1])

	t.Run("a resourceVersion older than the window is answered 410", func(t *testing.T) {
		ex := h.explain("pods", first.ResourceVersion)
		w := h.watchPods("default", registry.ListOptions{ResourceVersion: first.ResourceVersion})
		ev, _ := nextEvent(t, w)
		status, _ := ev.Object.(*metav1.Status)
		if ex.Outcome != OutcomeExpired || ex.Status == nil || status == nil || ex.Status.Code != http.StatusGone || ex.Status.Message != status.Message {
			t.Fatalf("got %s %+v, want %s with the watch's own Status %+v", ex.Outcome, ex.Status, OutcomeExpired, status)
		}
		if ex.Window.OldestResourceVersion != floor {
			t.Errorf("window floor %d, want %d", ex.Window.OldestResourceVersion, floor)
		}
	})
	t.Run("a resourceVersion inside the window is replayed from memory", func(t *testing.T) {
		from := rvOf(t, pushed[len(pushed)-3])
		ex := h.explain("pods", strconv.FormatInt(from, 10))
		if ex.Outcome != OutcomeReplay || ex.Replayed != 2 {
			t.Fatalf("got %s replaying %d, want %s replaying 2", ex.Outcome, ex.Replayed, OutcomeReplay)
		}
		w := h.watchPods("default", registry.ListOptions{ResourceVersion: strconv.FormatInt(from, 10)})
		for range ex.Replayed {
			if ev, _ := nextEvent(t, w); ev.Type != watch.Modified {
				t.Fatalf("replayed event %s, want MODIFIED", ev.Type)
			}
		}
	})
	t.Run("the window floor itself is still replayed", func(t *testing.T) {
		if ex := h.explain("pods", strconv.FormatInt(floor, 10)); ex.Outcome != OutcomeReplay || ex.Replayed != 5 {
			t.Fatalf("got %s replaying %d, want %s replaying 5", ex.Outcome, ex.Replayed, OutcomeReplay)
		}
	})
	t.Run("a resourceVersion ahead of the cache is waited on", func(t *testing.T) {
		if ex := h.explain("pods", strconv.FormatInt(newest+100, 10)); ex.Outcome != OutcomeWait || ex.CacheResourceVersion < newest {
			t.Fatalf("got %s at cache %d, want %s at %d or later", ex.Outcome, ex.CacheResourceVersion, OutcomeWait, newest)
		}
	})
	t.Run(`"0" and "" start with the current state`, func(t *testing.T) {
		for _, rv := range []string{"0", ""} {
			if ex := h.explain("pods", rv); ex.Outcome != OutcomeState {
				t.Errorf("resourceVersion %q: got %s, want %s", rv, ex.Outcome, OutcomeState)
			}
		}
	})
	t.Run("an unparseable resourceVersion is a 400, as for the watch", func(t *testing.T) {
		_, err := h.cache.ExplainWatch(h.ctx, "pods", "abc")
		if !apierrors.IsBadRequest(err) {
			t.Fatalf("got %v, want 400 BadRequest", err)
		}
	})
}

func TestExplainIsServedUnderDebugWatchcache(t *testing.T) {
	h := startCache(t)
	h.createNamespace("default")
	pod := h.createPod("default", "a", "")
	srv := httptest.NewServer(h.cache.Handler())
	t.Cleanup(srv.Close)

	resp, err := http.Get(srv.URL + "/debug/watchcache/pods/explain?resourceVersion=" + pod.ResourceVersion)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ex WatchExplanation
	if err := json.NewDecoder(resp.Body).Decode(&ex); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || ex.Resource != "pods" || ex.Outcome == "" || ex.Why == "" {
		t.Fatalf("got %d %+v, want 200 with an outcome and a reason", resp.StatusCode, ex)
	}

	resp2, err := http.Get(srv.URL + "/debug/watchcache/widgets/explain?resourceVersion=1")
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusNotFound {
		t.Errorf("unknown resource: got %d, want 404", resp2.StatusCode)
	}
}

// The event tape is the windows read newest first, across resources.
func TestRecentEventsMergesEveryWindowNewestFirst(t *testing.T) {
	h := startCache(t)
	h.createNamespace("default")
	h.createPod("default", "a", "")
	h.createNamespace("other")
	last := h.touchPod("default", "a", "1")
	h.listPods("default", registry.ListOptions{})
	if _, err := h.cache.List(h.ctx, namespacesRes, "", registry.ListOptions{}); err != nil { // the cache has every namespace
		t.Fatal(err)
	}

	got := h.cache.RecentEvents(3)
	want := []RecentEvent{
		{Type: "MODIFIED", Resource: "pods", Namespace: "default", Name: "a", ResourceVersion: rvOf(t, last)},
		{Type: "ADDED", Resource: "namespaces", Name: "other", ResourceVersion: rvOf(t, last) - 1},
		{Type: "ADDED", Resource: "pods", Namespace: "default", Name: "a", ResourceVersion: rvOf(t, last) - 2},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d events %+v, want %+v", len(got), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if n := len(h.cache.RecentEvents(1000)); n != 4 {
		t.Errorf("asking for more than held: got %d events, want all 4", n)
	}
}

func (h *harness) explain(resource, rv string) WatchExplanation {
	h.t.Helper()
	ex, err := h.cache.ExplainWatch(h.ctx, resource, rv)
	if err != nil {
		h.t.Fatalf("explaining a watch of %s from %q: %v", resource, rv, err)
	}
	return ex
}
