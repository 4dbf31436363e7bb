package watchcache

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"minicp/registry"
	"minicp/reqtrace"
)

// startWithFakeClock starts a cache whose bookmarks and waits follow a fake
// clock, and waits until its feeds have created their tickers.
func startWithFakeClock(t *testing.T, configure func(*Config)) (*harness, *clocktesting.FakeClock) {
	fake := clocktesting.NewFakeClock(time.Now())
	h := startCache(t, func(c *Config) {
		c.Clock = fake
		c.BookmarkFrequency = time.Minute
		c.TooLargeResourceVersionWait = 3 * time.Second
		if configure != nil {
			configure(c)
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for fake.Waiters() < len(*h.cache.caches.Load()) { // one bookmark ticker per feed
		if time.Now().After(deadline) {
			t.Fatal("the feeds did not start their tickers")
		}
		time.Sleep(time.Millisecond)
	}
	return h, fake
}

// expectNoEvent checks that nothing arrives while the fake clock stands
// still (a real-time grace of 200 ms for anything already on its way).
func expectNoEvent(t *testing.T, w watch.Interface) {
	t.Helper()
	select {
	case ev := <-w.ResultChan():
		t.Fatalf("got %s before the clock moved", ev.Type)
	case <-time.After(200 * time.Millisecond):
	}
}

// Bookmarks come every BookmarkFrequency of the injected clock, carrying
// the cache's resourceVersion; no test has to wait a real minute.
func TestBookmarksFollowTheInjectedClock(t *testing.T) {
	h, fake := startWithFakeClock(t, nil)
	h.createNamespace("default")
	a := h.createPod("default", "a", "")
	w := h.watchPods("default", registry.ListOptions{ResourceVersion: a.ResourceVersion, AllowWatchBookmarks: true})
	expectNoEvent(t, w)
	fake.Step(59 * time.Second)
	expectNoEvent(t, w)
	fake.Step(2 * time.Second)
	ev, _ := nextEvent(t, w)
	if ev.Type != watch.Bookmark || rvOf(t, ev.Object) < rvOf(t, a) {
		t.Fatalf("after a minute: got %s at %v, want a BOOKMARK at %s or later", ev.Type, ev.Object, a.ResourceVersion)
	}
}

// A watch also gets a bookmark shortly before its deadline, so that its
// client resumes from a recent resourceVersion (upstream: 2 s before).
func TestAWatchGetsABookmarkJustBeforeItsDeadline(t *testing.T) {
	h, fake := startWithFakeClock(t, nil)
	h.createNamespace("default")
	ctx, cancel := context.WithTimeout(h.ctx, 30*time.Second)
	defer cancel()
	w, err := h.cache.Watch(ctx, podsRes, "default", registry.ListOptions{ResourceVersion: "0", AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	fake.Step(25 * time.Second)
	expectNoEvent(t, w)
	fake.Step(4 * time.Second) // 29 s: within 2 s of the 30 s deadline
	if ev, _ := nextEvent(t, w); ev.Type != watch.Bookmark {
		t.Fatalf("got %s, want the BOOKMARK before the deadline", ev.Type)
	}
}

// A read at a resourceVersion the cache has not reached waits
// TooLargeResourceVersionWait of the injected clock, then answers 504.
func TestAReadAheadOfTheCacheWaitsThenAnswers504(t *testing.T) {
	h, fake := startWithFakeClock(t, nil)
	rc := h.podCache()
	future := strconv.FormatInt(rc.status().ResourceVersion+1000, 10)
	errc := make(chan error, 1)
	trace := reqtrace.New()
	go func() {
		_, err := h.cache.List(reqtrace.WithTrace(h.ctx, trace), podsRes, "", registry.ListOptions{ResourceVersion: future})
		errc <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for rc.waiting.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the list is not waiting")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-errc:
		t.Fatalf("answered %v before the clock moved", err)
	case <-time.After(100 * time.Millisecond):
	}
	fake.Step(3 * time.Second)
	select {
	case err := <-errc:
		status, ok := err.(apierrors.APIStatus)
		if !ok || status.Status().Code != http.StatusGatewayTimeout || status.Status().Details.RetryAfterSeconds != 1 {
			t.Errorf("got %v, want 504 Too large resource version with Retry-After 1", err)
		}
		if got := trace.Snapshot().Count[reqtrace.CacheWait]; got != 1 {
			t.Errorf("the request's trace has %d cache_wait phases, want 1", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer after the wait elapsed")
	}
}
