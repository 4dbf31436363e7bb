package storagetest

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"minicp/registry"
)

var watchCases = []testCase{
	{"WatchFromZeroStartsWithTheCurrentStateThenChanges", testWatchFromZero},
	{"WatchWithoutResourceVersionStartsWithAConsistentState", testWatchFromEmpty},
	{"WatchFromNDeliversEveryLaterChangeInOrderOnceEach", testWatchFromN},
	{"WatchFromAResourceVersionNoLongerAvailableGets410ThenEnds", testWatchTooOld},
	{"WatchWithSelectorsTurnsMovesAcrossThemIntoAddedAndDeleted", testWatchSelectors},
	{"WatchBookmarksCarryAResourceVersionAtLeastTheLastEvents", testWatchBookmarks},
	{"WatchListStreamsTheStateThenAnAnnotatedBookmark", testWatchList},
	{"WatchEndsWhenStoppedOrWhenItsContextEnds", testWatchEnds},
}

func testWatchFromZero(t *testing.T, s *suite) {
	s.createPod("a")
	s.createPod("b")
	s.mustListPods(ns, registry.ListOptions{}) // consistent: a cache has caught up
	w := s.watchPods(registry.ListOptions{ResourceVersion: "0"})
	s.expect(w, watch.Added, "a")
	s.expect(w, watch.Added, "b")
	c := s.createPod("c")
	if m := s.expect(w, watch.Added, "c"); m.GetResourceVersion() != c.ResourceVersion {
		t.Errorf("ADDED at %s, want the create's %s", m.GetResourceVersion(), c.ResourceVersion)
	}
}

func testWatchFromEmpty(t *testing.T, s *suite) {
	s.createPod("a")
	b := s.createPod("b")
	w := s.watchPods(registry.ListOptions{})
	s.expect(w, watch.Added, "a")
	if m := s.expect(w, watch.Added, "b"); m.GetResourceVersion() != b.ResourceVersion {
		t.Errorf("initial ADDED at %s, want the object's %s", m.GetResourceVersion(), b.ResourceVersion)
	}
	s.deletePod("a")
	s.expect(w, watch.Deleted, "a")
}

// M5: every change after N, in revision order, exactly
// once; a DELETED event carries the deletion's revision.
func testWatchFromN(t *testing.T, s *suite) {
	start := s.createPod("setup")
	w := s.watchPods(registry.ListOptions{ResourceVersion: start.ResourceVersion})
	type change struct {
		typ watch.EventType
		rv  string
	}
	var want []change
	for i := range 6 {
		want = append(want, change{watch.Added, s.createPod(podName(i)).ResourceVersion})
	}
	for i := 0; i < 6; i += 2 {
		want = append(want, change{watch.Modified, s.setLabel(podName(i), "v", "2").ResourceVersion})
	}
	for i := 0; i < 6; i += 3 {
		want = append(want, change{watch.Deleted, s.deletePod(podName(i)).ResourceVersion})
	}
	for i, c := range want {
		ev := s.next(w)
		m, err := meta.Accessor(ev.Object)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != c.typ || m.GetResourceVersion() != c.rv {
			t.Fatalf("event %d: %s at %s, want %s at %s (out of order, duplicated or lost)", i, ev.Type, m.GetResourceVersion(), c.typ, c.rv)
		}
	}
}

// M6: a resourceVersion whose changes are no longer all
// available (compacted in etcd, evicted from a cache's window) is an ERROR
// event with 410 Expired, "too old resource version", and the watch ends.
func testWatchTooOld(t *testing.T, s *suite) {
	first := s.createPod("a")
	for i := range PodWindow + 5 {
		s.setLabel("a", "v", itoa(int64(i)))
	}
	// A consistent list first: a cache has then received every write, and
	// the compaction cannot cut its own etcd watch (which would make it
	// re-list and end every watch, a different test).
	s.mustListPods(ns, registry.ListOptions{})
	if _, err := s.Etcd.Compact(s.ctx, s.currentRevision()); err != nil {
		t.Fatal(err)
	}
	w := s.watchPods(registry.ListOptions{ResourceVersion: first.ResourceVersion})
	ev := s.next(w)
	status, ok := ev.Object.(*metav1.Status)
	if ev.Type != watch.Error || !ok {
		t.Fatalf("got %s %T, want ERROR carrying a Status", ev.Type, ev.Object)
	}
	if status.Code != http.StatusGone || status.Reason != metav1.StatusReasonExpired ||
		!strings.HasPrefix(status.Message, "too old resource version: "+first.ResourceVersion+" (") {
		t.Errorf("got %d %s %q, want 410 Expired \"too old resource version: %s (...)\"", status.Code, status.Reason, status.Message, first.ResourceVersion)
	}
	if !apierrors.IsResourceExpired(apierrors.FromObject(status)) {
		t.Error("client-go would not recognise the status as expired, and would not relist")
	}
	s.expectClosed(w)
}

func testWatchSelectors(t *testing.T, s *suite) {
	start := s.createPodIn(ns, newPod("other", "", map[string]string{"app": "db"}))
	w := s.watchPods(registry.ListOptions{ResourceVersion: start.ResourceVersion, LabelSelector: labels.SelectorFromSet(labels.Set{"app": "web"})})
	s.createPod("a")
	s.expect(w, watch.Added, "a")
	gone := s.setLabel("a", "app", "db")
	if m := s.expect(w, watch.Deleted, "a"); m.GetResourceVersion() != gone.ResourceVersion {
		t.Errorf("DELETED (left the selector) at %s, want the change's %s", m.GetResourceVersion(), gone.ResourceVersion)
	}
	s.setLabel("a", "v", "2") // outside the selector: nothing
	back := s.setLabel("a", "app", "web")
	if m := s.expect(w, watch.Added, "a"); m.GetResourceVersion() != back.ResourceVersion {
		t.Errorf("ADDED (entered the selector) at %s, want %s", m.GetResourceVersion(), back.ResourceVersion)
	}
	s.setLabel("a", "v", "3")
	s.expect(w, watch.Modified, "a")
}

func testWatchBookmarks(t *testing.T, s *suite) {
	w := s.watchPods(registry.ListOptions{ResourceVersion: itoa(s.currentRevision()), AllowWatchBookmarks: true})
	a := s.createPod("a")
	s.expect(w, watch.Added, "a")
	timeout := time.After(10 * BookmarkEvery)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch closed, want a BOOKMARK")
			}
			if ev.Type != watch.Bookmark {
				t.Fatalf("got %s, want a BOOKMARK (nothing else was written)", ev.Type)
			}
			m, err := meta.Accessor(ev.Object)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := ev.Object.(*corev1.Pod); !ok {
				t.Errorf("BOOKMARK carries %T, want an empty *v1.Pod", ev.Object)
			}
			if got := rv(t, m.GetResourceVersion()); got < rv(t, a.ResourceVersion) {
				t.Errorf("BOOKMARK at %d, older than the ADDED at %s before it", got, a.ResourceVersion)
			}
			return
		case <-timeout:
			t.Fatalf("no BOOKMARK within %v", 10*BookmarkEvery)
		}
	}
}

// client-go's watch-list informers (the default in v0.37) sync on the
// annotated BOOKMARK that ends the initial events.
func testWatchList(t *testing.T, s *suite) {
	s.createPod("a")
	s.createPod("b")
	now := s.currentRevision()
	yes := true
	w := s.watchPods(registry.ListOptions{
		SendInitialEvents: &yes, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true,
	})
	s.expect(w, watch.Added, "a")
	s.expect(w, watch.Added, "b")
	ev := s.next(w)
	m, err := meta.Accessor(ev.Object)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != watch.Bookmark || m.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
		t.Fatalf("got %s with annotations %v, want the initial-events-end BOOKMARK", ev.Type, m.GetAnnotations())
	}
	if got := rv(t, m.GetResourceVersion()); got < now {
		t.Errorf("initial-events-end BOOKMARK at %d, before etcd's revision %d when the watch began", got, now)
	}
	s.createPod("c")
	s.expect(w, watch.Added, "c")

	_, err = s.Storage.Watch(s.ctx, s.pods, ns, registry.ListOptions{SendInitialEvents: &yes})
	if !apierrors.IsInvalid(err) {
		t.Errorf("sendInitialEvents without resourceVersionMatch: got %v, want 422 Invalid", err)
	}
}

func testWatchEnds(t *testing.T, s *suite) {
	w := s.watchPods(registry.ListOptions{ResourceVersion: itoa(s.currentRevision())})
	w.Stop()
	s.expectClosed(w)

	ctx, cancel := context.WithCancel(s.ctx)
	w2, err := s.Storage.Watch(ctx, s.pods, ns, registry.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	s.expectClosed(w2)
}
