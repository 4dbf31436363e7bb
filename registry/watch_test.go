package registry

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

const eventTimeout = 10 * time.Second

func watchPods(t *testing.T, s *Store, opts ListOptions) watch.Interface {
	t.Helper()
	w, err := s.Watch(testContext(t), podsResource(t), "default", opts)
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	t.Cleanup(w.Stop)
	return w
}

func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed, want an event")
		}
		return ev
	case <-time.After(eventTimeout):
		t.Fatalf("no event within %v", eventTimeout)
	}
	return watch.Event{}
}

func expectEvent(t *testing.T, w watch.Interface, typ watch.EventType, name string) metav1.Object {
	t.Helper()
	ev := nextEvent(t, w)
	m, err := meta.Accessor(ev.Object)
	if err != nil {
		t.Fatalf("event %s: %v", ev.Type, err)
	}
	if ev.Type != typ || m.GetName() != name {
		t.Fatalf("got %s %s, want %s %s", ev.Type, m.GetName(), typ, name)
	}
	return m
}

func expectClosed(t *testing.T, w watch.Interface) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if ok {
			t.Fatalf("got %s event, want the watch closed", ev.Type)
		}
	case <-time.After(eventTimeout):
		t.Fatal("watch not closed")
	}
}

func setLabel(t *testing.T, s *Store, name, key, value string) *corev1.Pod {
	t.Helper()
	out, _, err := s.Update(testContext(t), podsResource(t), "default", name, UpdateOptions{}, func(cur runtime.Object) (runtime.Object, error) {
		cur.(*corev1.Pod).Labels[key] = value
		return cur, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.(*corev1.Pod)
}

func TestWatchFromZeroSendsCurrentStateThenChanges(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	ctx := testContext(t)
	createPod(t, s, newPod("a"))
	createPod(t, s, newPod("b"))
	w := watchPods(t, s, ListOptions{ResourceVersion: "0"})
	expectEvent(t, w, watch.Added, "a")
	expectEvent(t, w, watch.Added, "b")
	created := createPod(t, s, newPod("c"))
	if m := expectEvent(t, w, watch.Added, "c"); m.GetResourceVersion() != created.ResourceVersion {
		t.Errorf("ADDED rv %s, want %s", m.GetResourceVersion(), created.ResourceVersion)
	}
	updated := setLabel(t, s, "a", "v", "2")
	if m := expectEvent(t, w, watch.Modified, "a"); m.GetResourceVersion() != updated.ResourceVersion {
		t.Errorf("MODIFIED rv %s, want %s", m.GetResourceVersion(), updated.ResourceVersion)
	}
	deleted, err := s.Delete(ctx, podsResource(t), "default", "b", DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := expectEvent(t, w, watch.Deleted, "b"); m.GetResourceVersion() != deleted.(*corev1.Pod).ResourceVersion {
		t.Errorf("DELETED rv %s, want the deletion's %s", m.GetResourceVersion(), deleted.(*corev1.Pod).ResourceVersion)
	}
}

// M5: a watch delivers every change after its start
// revision, in revision order, exactly once.
func TestWatchDeliversEveryChangeInOrderWithoutDuplicates(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	ctx := testContext(t)
	start, err := s.currentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := watchPods(t, s, ListOptions{ResourceVersion: strconv.FormatInt(start, 10)})
	var want []string
	for i := 0; i < 60; i++ {
		want = append(want, createPod(t, s, newPod(fmt.Sprintf("p%02d", i))).ResourceVersion)
	}
	for i := 0; i < 60; i += 2 {
		want = append(want, setLabel(t, s, fmt.Sprintf("p%02d", i), "v", "2").ResourceVersion)
	}
	for i := 0; i < 60; i += 3 {
		out, err := s.Delete(ctx, podsResource(t), "default", fmt.Sprintf("p%02d", i), DeleteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, out.(*corev1.Pod).ResourceVersion)
	}
	for i, rv := range want {
		ev := nextEvent(t, w)
		m, err := meta.Accessor(ev.Object)
		if err != nil {
			t.Fatal(err)
		}
		if m.GetResourceVersion() != rv {
			t.Fatalf("event %d: got %s at rv %s, want rv %s", i, ev.Type, m.GetResourceVersion(), rv)
		}
	}
}

// M6: watching from a compacted revision is an ERROR event
// carrying 410 Expired, after which the watch ends.
func TestWatchFromCompactedRevisionYieldsExpiredError(t *testing.T) {
	s, client := newTestStore(t, Options{})
	ctx := testContext(t)
	first := createPod(t, s, newPod("a"))
	createPod(t, s, newPod("b"))
	createPod(t, s, newPod("c"))
	current, err := s.currentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Compact(ctx, current); err != nil {
		t.Fatal(err)
	}
	w := watchPods(t, s, ListOptions{ResourceVersion: first.ResourceVersion})
	ev := nextEvent(t, w)
	status, ok := ev.Object.(*metav1.Status)
	if ev.Type != watch.Error || !ok {
		t.Fatalf("got %s %T, want ERROR with a Status", ev.Type, ev.Object)
	}
	want := fmt.Sprintf("too old resource version: %s (%d)", first.ResourceVersion, current-1)
	if status.Code != http.StatusGone || status.Reason != metav1.StatusReasonExpired || status.Message != want {
		t.Errorf("got %d %s %q, want 410 Expired %q", status.Code, status.Reason, status.Message, want)
	}
	if !apierrors.IsResourceExpired(apierrors.FromObject(status)) {
		t.Error("client-go would not recognise the status as expired")
	}
	expectClosed(t, w)
}

// client-go's watch-list informers sync on the annotated bookmark.
func TestSendInitialEventsEndsWithAnnotatedBookmark(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	createPod(t, s, newPod("a"))
	createPod(t, s, newPod("b"))
	ctx := testContext(t)
	listRev, err := s.currentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	w := watchPods(t, s, ListOptions{
		SendInitialEvents: &yes, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true,
	})
	expectEvent(t, w, watch.Added, "a")
	expectEvent(t, w, watch.Added, "b")
	ev := nextEvent(t, w)
	m, err := meta.Accessor(ev.Object)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != watch.Bookmark || m.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
		t.Fatalf("got %s with annotations %v, want the initial-events-end bookmark", ev.Type, m.GetAnnotations())
	}
	if m.GetResourceVersion() != strconv.FormatInt(listRev, 10) {
		t.Errorf("bookmark rv %s, want the list revision %d", m.GetResourceVersion(), listRev)
	}
	if _, ok := ev.Object.(*corev1.Pod); !ok {
		t.Errorf("bookmark object is %T, want *v1.Pod", ev.Object)
	}
	createPod(t, s, newPod("c"))
	expectEvent(t, w, watch.Added, "c")

	_, err = s.Watch(ctx, podsResource(t), "default", ListOptions{SendInitialEvents: &yes})
	if !apierrors.IsInvalid(err) {
		t.Errorf("sendInitialEvents without resourceVersionMatch: got %v, want 422", err)
	}
}

// Upstream's etcd watcher logic: selectors apply to the old and new states.
func TestWatchWithSelectorTurnsMovesAcrossTheSelectorIntoAddedAndDeleted(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	w := watchPods(t, s, ListOptions{ResourceVersion: "0", LabelSelector: labels.SelectorFromSet(labels.Set{"app": "web"})})
	other := newPod("other")
	other.Labels["app"] = "db"
	createPod(t, s, other)
	createPod(t, s, newPod("a"))
	expectEvent(t, w, watch.Added, "a")
	gone := setLabel(t, s, "a", "app", "db")
	if m := expectEvent(t, w, watch.Deleted, "a"); m.GetResourceVersion() != gone.ResourceVersion {
		t.Errorf("DELETED rv %s, want %s", m.GetResourceVersion(), gone.ResourceVersion)
	}
	setLabel(t, s, "a", "v", "2") // outside the selector: nothing
	setLabel(t, s, "a", "app", "web")
	expectEvent(t, w, watch.Added, "a")
	setLabel(t, s, "a", "v", "3")
	expectEvent(t, w, watch.Modified, "a")
}

func TestProgressNotificationsBecomeBookmarks(t *testing.T) {
	s, client := newTestStore(t, Options{})
	ctx := testContext(t)
	w := watchPods(t, s, ListOptions{ResourceVersion: "0", AllowWatchBookmarks: true})
	createNamespace(t, s, "other") // a revision the pods watch has no event for
	current, err := s.currentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(eventTimeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		// The watch's stream carries the require-leader metadata; ask on it.
		if err := client.RequestProgress(clientv3.WithRequireLeader(ctx)); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-w.ResultChan():
			m, err := meta.Accessor(ev.Object)
			if err != nil {
				t.Fatal(err)
			}
			if ev.Type != watch.Bookmark || m.GetResourceVersion() != strconv.FormatInt(current, 10) || len(m.GetAnnotations()) != 0 {
				t.Fatalf("got %s rv %s annotations %v, want a plain BOOKMARK at %d", ev.Type, m.GetResourceVersion(), m.GetAnnotations(), current)
			}
			return
		case <-deadline:
			t.Fatal("no bookmark")
		case <-tick.C:
		}
	}
}

func TestWatchGoroutineEndsAfterStopEvenWithSlowConsumer(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	w := watchPods(t, s, ListOptions{ResourceVersion: "0"})
	for i := 0; i < resultBufferSize+20; i++ { // more than the buffer holds; nobody reads
		createPod(t, s, newPod(fmt.Sprintf("p%03d", i)))
	}
	w.Stop()
	select {
	case <-w.(*etcdWatch).done:
	case <-time.After(eventTimeout):
		t.Fatal("watch goroutine still running after Stop")
	}
	drained := 0
	for range w.ResultChan() {
		drained++
	}
	if drained > resultBufferSize {
		t.Errorf("drained %d events, more than the buffer", drained)
	}
}

func TestWatchEndsWhenItsContextEnds(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	ctx, cancel := context.WithCancel(testContext(t))
	w, err := s.Watch(ctx, podsResource(t), "default", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	expectClosed(t, w)
	<-w.(*etcdWatch).done
}
