package apiserver

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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"minicp/internal/testsupport"
	"minicp/registry"
)

// startWithEtcd serves the real etcd-backed registry.Store, on an embedded
// single-member etcd, and creates the "default" namespace.
func startWithEtcd(t *testing.T) (*testServer, *clientv3.Client) {
	t.Helper()
	store, client := newEtcdStore(t, testResources, registry.Options{})
	// Registered after etcd's cleanup, so it runs first: the server stops
	// before etcd does.
	ts := startTestServer(t, store)
	ts.createDefaultNamespace(t)
	return ts, client
}

// M1 and M4: client-go, in JSON and protobuf, drives
// every verb through the apiserver into etcd; each write's resourceVersion
// is its transaction's revision, and a watch reports exactly those writes.
func TestClientGoAgainstTheEtcdStore(t *testing.T) {
	ts, _ := startWithEtcd(t)
	for name, cs := range ts.clientsets(t) {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			pods := cs.CoreV1().Pods("default")
			list, err := pods.List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
			if err != nil {
				t.Fatalf("watch: %v", err)
			}
			defer w.Stop()

			podName := "web-" + name
			var writes []watch.Event
			// record(typ)(write) notes a write and the event it must cause.
			record := func(typ watch.EventType) func(*corev1.Pod, error) *corev1.Pod {
				return func(pod *corev1.Pod, err error) *corev1.Pod {
					t.Helper()
					if err != nil {
						t.Fatalf("write %d (%s): %v", len(writes), typ, err)
					}
					writes = append(writes, watch.Event{Type: typ, Object: pod})
					return pod
				}
			}
			created := record(watch.Added)(pods.Create(ctx, testPod(podName), metav1.CreateOptions{}))
			got, err := pods.Get(ctx, podName, metav1.GetOptions{})
			if err != nil || got.ResourceVersion != created.ResourceVersion {
				t.Fatalf("get: %v (rv %s, want %s)", err, got.ResourceVersion, created.ResourceVersion)
			}
			got.Labels["step"] = "update"
			record(watch.Modified)(pods.Update(ctx, got, metav1.UpdateOptions{}))
			if _, err := pods.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
				t.Errorf("update at a stale resourceVersion: got %v, want 409 Conflict", err)
			}
			record(watch.Modified)(pods.Patch(ctx, podName, types.MergePatchType, []byte(`{"metadata":{"labels":{"step":"merge"}}}`), metav1.PatchOptions{}))
			record(watch.Modified)(pods.Patch(ctx, podName, types.JSONPatchType, []byte(`[{"op":"replace","path":"/metadata/labels/step","value":"json"}]`), metav1.PatchOptions{}))
			last := record(watch.Modified)(pods.Patch(ctx, podName, types.StrategicMergePatchType, []byte(`{"spec":{"containers":[{"name":"c","image":"nginx:1.28"}]}}`), metav1.PatchOptions{}))
			if last.Labels["step"] != "json" || last.Spec.Containers[0].Image != "nginx:1.28" {
				t.Errorf("got labels %v image %s after the patches", last.Labels, last.Spec.Containers[0].Image)
			}
			if err := pods.Delete(ctx, podName, metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			writes = append(writes, watch.Event{Type: watch.Deleted})

			for i, want := range writes {
				ev := nextEvent(t, w)
				pod, ok := ev.Object.(*corev1.Pod)
				if ev.Type != want.Type || !ok || pod.Name != podName {
					t.Fatalf("event %d: got %s %T, want %s of %s", i, ev.Type, ev.Object, want.Type, podName)
				}
				if want.Object != nil && pod.ResourceVersion != want.Object.(*corev1.Pod).ResourceVersion {
					t.Errorf("event %d: got resourceVersion %s, want the write's %s", i, pod.ResourceVersion, want.Object.(*corev1.Pod).ResourceVersion)
				}
			}
		})
	}
}

// client-go v0.37 informers open with a watch-list request
// (sendInitialEvents); through the apiserver they sync and follow changes.
func TestInformerSyncsThroughTheApiserver(t *testing.T) {
	ts, _ := startWithEtcd(t)
	ctx := testContext(t)
	cs := ts.protobufClientset(t)
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("default"))
	informer := factory.Core().V1().ConfigMaps().Informer()
	stop := make(chan struct{})
	factory.Start(stop)
	t.Cleanup(func() { close(stop); factory.Shutdown() })
	syncCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), informer.HasSynced) {
		t.Fatal("the informer did not sync within 15s")
	}
	if _, exists, _ := informer.GetStore().GetByKey("default/before"); !exists {
		t.Error("the synced informer lacks the object created before it started")
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	testsupport.Eventually(t, 10*time.Second, "the informer to see the new object", func() bool {
		_, exists, _ := informer.GetStore().GetByKey("default/after")
		return exists
	})
}

// M6: a watch from a compacted revision gets one ERROR
// event with 410 Expired.
func TestWatchFromACompactedRevisionGetsExpired(t *testing.T) {
	ts, etcd := startWithEtcd(t)
	ctx := testContext(t)
	cms := ts.clientset(t).CoreV1().ConfigMaps("default")
	var rvs []string
	for _, name := range []string{"a", "b", "c"} {
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		rvs = append(rvs, cm.ResourceVersion)
	}
	// Watching from a's resourceVersion needs b's revision onwards;
	// compacting at c's removes b's.
	rev, err := strconv.ParseInt(rvs[2], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := etcd.Compact(ctx, rev); err != nil {
		t.Fatalf("compact: %v", err)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: rvs[0]})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	ev := nextEvent(t, w)
	if status, ok := ev.Object.(*metav1.Status); ev.Type != watch.Error || !ok || status.Code != http.StatusGone {
		t.Errorf("got %s %#v, want ERROR 410", ev.Type, ev.Object)
	}
}

// A rejected request leaves etcd untouched: every check runs before the
// store is called.
func TestRejectedWritesLeaveEtcdUnchanged(t *testing.T) {
	ts, etcd := startWithEtcd(t)
	ctx := testContext(t)
	if _, err := ts.clientset(t).CoreV1().Pods("default").Create(ctx, testPod("p"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	revision := func() int64 {
		resp, err := etcd.Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			t.Fatalf("etcd: %v", err)
		}
		return resp.Header.Revision
	}
	before := revision()
	for _, r := range []struct{ method, path, body, contentType string }{
		{"POST", "/api/v1/namespaces/default/pods?fieldValidation=Strict", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"q"},"spec":{"foo":1}}`, "application/json"},
		{"PUT", "/api/v1/namespaces/default/pods/p", fmt.Sprintf(podBody, "other"), "application/json"},
		{"PATCH", "/api/v1/namespaces/default/pods/p", `[{"op":"remove","path":"/nothing"}]`, "application/json-patch+json"},
		{"PATCH", "/api/v1/namespaces/default/pods/p", `{"metadata":{"resourceVersion":"1"}}`, "application/merge-patch+json"},
	} {
		resp := ts.do(t, r.method, r.path, r.body, "Content-Type: "+r.contentType)
		if resp.code < 400 {
			t.Errorf("%s %s: got %d, want it rejected", r.method, r.path, resp.code)
		}
	}
	if after := revision(); after != before {
		t.Errorf("etcd revision moved %d -> %d: a rejected request wrote", before, after)
	}
}
