package apiserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"minicp/internal/testsupport"
)

// openWatch starts a raw watch request and returns its response; the body
// is closed with the test.
func (ts *testServer) openWatch(t *testing.T, ctx context.Context, path string, headers ...string) *http.Response {
	t.Helper()
	resp := send(t, ctx, ts.http, "GET", path, "", headers...)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// A JSON watch is a chunked response with one WatchEvent per line, each
// flushed as it happens (the test reads every event before the next write).
func TestJSONWatchStreamsOneFlushedEventPerLine(t *testing.T) {
	ts := startTestServer(t, newFakeStore())
	ctx := testContext(t)
	resp := ts.openWatch(t, ctx, "/api/v1/namespaces/default/configmaps?watch=true")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("got %d %q, want 200 application/json", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
		t.Errorf("got Transfer-Encoding %v, want chunked", resp.TransferEncoding)
	}
	lines := bufio.NewScanner(resp.Body)
	cms := ts.clientset(t).CoreV1().ConfigMaps("default")
	for i, step := range []struct {
		write    func() error
		wantType string
	}{
		{func() error {
			_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
			return err
		}, "ADDED"},
		{func() error {
			_, err := cms.Patch(ctx, "a", "application/merge-patch+json", []byte(`{"data":{"k":"v"}}`), metav1.PatchOptions{})
			return err
		}, "MODIFIED"},
		{func() error { return cms.Delete(ctx, "a", metav1.DeleteOptions{}) }, "DELETED"},
	} {
		if err := step.write(); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		if !lines.Scan() {
			t.Fatalf("stream ended before event %d: %v", i, lines.Err())
		}
		var event struct {
			Type   string           `json:"type"`
			Object corev1.ConfigMap `json:"object"`
		}
		if err := json.Unmarshal(lines.Bytes(), &event); err != nil {
			t.Fatalf("line %d is not a WatchEvent: %v: %s", i, err, lines.Bytes())
		}
		if event.Type != step.wantType || event.Object.Name != "a" || event.Object.Kind != "ConfigMap" || event.Object.APIVersion != "v1" {
			t.Errorf("event %d: got %s %s/%s %s, want %s v1/ConfigMap a", i, event.Type, event.Object.APIVersion, event.Object.Kind, event.Object.Name, step.wantType)
		}
	}
}

// A protobuf watch is length-prefixed frames that client-go decodes.
func TestProtobufWatchIsDecodedByClientGo(t *testing.T) {
	ts := startTestServer(t, newFakeStore())
	ctx := testContext(t)
	resp := ts.openWatch(t, ctx, "/api/v1/namespaces/default/pods?watch=1", "Accept: application/vnd.kubernetes.protobuf")
	if got, want := resp.Header.Get("Content-Type"), "application/vnd.kubernetes.protobuf;stream=watch"; got != want {
		t.Errorf("got Content-Type %q, want %q", got, want)
	}
	pods := ts.protobufClientset(t).CoreV1().Pods("default")
	w, err := pods.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	created, err := pods.Create(ctx, testPod("p"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	ev := nextEvent(t, w)
	pod, ok := ev.Object.(*corev1.Pod)
	if ev.Type != watch.Added || !ok || pod.ResourceVersion != created.ResourceVersion {
		t.Errorf("got %s %T, want ADDED of the pod at resourceVersion %s", ev.Type, ev.Object, created.ResourceVersion)
	}
}

func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	return watch.Event{}
}

// An ERROR event carries a Status, e.g. 410 Expired when the watch's start
// revision has been compacted (M6), which client-go
// decodes for the reflector to relist.
func TestWatchErrorEventsCarryAStatus(t *testing.T) {
	store := newFakeStore()
	ts := startTestServer(t, store)
	for name, cs := range map[string]interface {
		Watch() (watch.Interface, error)
	}{
		"json": watchFunc(func() (watch.Interface, error) {
			return ts.clientset(t).CoreV1().Pods("").Watch(testContext(t), metav1.ListOptions{})
		}),
		"protobuf": watchFunc(func() (watch.Interface, error) {
			return ts.protobufClientset(t).CoreV1().Pods("").Watch(testContext(t), metav1.ListOptions{})
		}),
	} {
		t.Run(name, func(t *testing.T) {
			w, err := cs.Watch()
			if err != nil {
				t.Fatalf("watch: %v", err)
			}
			defer w.Stop()
			testsupport.Eventually(t, 5*time.Second, "the watch to reach the store", func() bool { return store.openWatchers() == 1 })
			gone := &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired, Message: "too old resource version: 1 (5)"}
			store.sendToWatches(watch.Event{Type: watch.Error, Object: gone})
			ev := nextEvent(t, w)
			status, ok := ev.Object.(*metav1.Status)
			if ev.Type != watch.Error || !ok || status.Code != http.StatusGone || status.Reason != metav1.StatusReasonExpired {
				t.Errorf("got %s %#v, want ERROR with 410 Expired", ev.Type, ev.Object)
			}
			w.Stop()
			testsupport.Eventually(t, 5*time.Second, "the store watch to stop", func() bool { return store.openWatchers() == 0 })
		})
	}
}

type watchFunc func() (watch.Interface, error)

func (f watchFunc) Watch() (watch.Interface, error) { return f() }

// timeoutSeconds ends the stream cleanly: a complete chunked response, no
// ERROR event.
func TestWatchTimeoutSecondsEndsTheStreamCleanly(t *testing.T) {
	store := newFakeStore()
	ts := startTestServer(t, store)
	resp := ts.openWatch(t, testContext(t), "/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=1")
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the stream: %v (want a clean end)", err)
	}
	if len(body) != 0 {
		t.Errorf("got %q, want no events", body)
	}
	testsupport.Eventually(t, 5*time.Second, "the store watch to stop", func() bool { return store.openWatchers() == 0 })
}

// When the client goes away, the handler stops the registry watch and
// returns: no goroutine is left streaming to nobody.
func TestWatchHandlerEndsWhenTheClientDisconnects(t *testing.T) {
	store := newFakeStore()
	ts := startTestServer(t, store)
	ctx, cancel := context.WithCancel(testContext(t))
	resp := ts.openWatch(t, ctx, "/api/v1/pods?watch=true")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("got %d, want 200", resp.StatusCode)
	}
	testsupport.Eventually(t, 5*time.Second, "the watch to be open", func() bool { return ts.openWatches.Load() == 1 && store.openWatchers() == 1 })
	cancel()
	testsupport.Eventually(t, 5*time.Second, "the handler to return", func() bool { return ts.openWatches.Load() == 0 })
	if got := store.stoppedWatches.Load(); got != 1 {
		t.Errorf("got %d stopped store watches, want 1", got)
	}
}

// Watching one named object watches metadata.name.
func TestWatchOfANamedObjectSeesOnlyThatObject(t *testing.T) {
	ts := startTestServer(t, newFakeStore())
	ctx := testContext(t)
	resp := ts.openWatch(t, ctx, "/api/v1/namespaces/default/configmaps/b?watch=true")
	cms := ts.clientset(t).CoreV1().ConfigMaps("default")
	for _, name := range []string{"a", "b"} {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	lines := bufio.NewScanner(resp.Body)
	if !lines.Scan() {
		t.Fatalf("no event: %v", lines.Err())
	}
	var event metav1.WatchEvent
	var cm corev1.ConfigMap
	if err := json.Unmarshal(lines.Bytes(), &event); err != nil {
		t.Fatalf("not a WatchEvent: %v", err)
	}
	if err := json.Unmarshal(event.Object.Raw, &cm); err != nil || cm.Name != "b" {
		t.Errorf("got first event about %q, want b", cm.Name)
	}
}

// kubectl get -w asks for Tables: each event is a one-row Table, and only
// the first carries the column definitions.
func TestTableWatchSendsColumnsOnlyInTheFirstEvent(t *testing.T) {
	ts := startTestServer(t, newFakeStore())
	ctx := testContext(t)
	resp := ts.openWatch(t, ctx, "/api/v1/namespaces/default/pods?watch=true", "Accept: application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
	pods := ts.clientset(t).CoreV1().Pods("default")
	if _, err := pods.Create(ctx, testPod("p"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := pods.Delete(ctx, "p", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	lines := bufio.NewScanner(resp.Body)
	for i, wantColumns := range []bool{true, false} {
		if !lines.Scan() {
			t.Fatalf("stream ended before event %d: %v", i, lines.Err())
		}
		var event metav1.WatchEvent
		var table metav1.Table
		if err := json.Unmarshal(lines.Bytes(), &event); err != nil {
			t.Fatalf("not a WatchEvent: %v", err)
		}
		if err := json.Unmarshal(event.Object.Raw, &table); err != nil || table.Kind != "Table" || len(table.Rows) != 1 {
			t.Fatalf("event %d: got %s, want a one-row Table", i, event.Object.Raw)
		}
		if got := len(table.ColumnDefinitions) > 0; got != wantColumns {
			t.Errorf("event %d: got column definitions %v, want %v", i, got, wantColumns)
		}
	}
}
