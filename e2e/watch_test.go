package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"minicp/controlplane"
	"minicp/e2e/framework"
)

// M5: a watch delivers every change after its start
// revision, in revision order, without loss or duplicates.
func TestWatchDeliversEveryEventInRevisionOrder(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	for _, tc := range []struct {
		name      string
		clientset func() *kubernetes.Clientset
	}{
		{"json", func() *kubernetes.Clientset { return s.Clientset }},
		{"protobuf", func() *kubernetes.Clientset { return s.ProtobufClientset(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := framework.Context(t, 60*time.Second)
			cms := tc.clientset().CoreV1().ConfigMaps("default")
			list, err := cms.List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
			if err != nil {
				t.Fatalf("watch: %v", err)
			}
			defer w.Stop()

			const writes = 60
			var wantRVs []string
			for i := range writes {
				name := fmt.Sprintf("%s-%d", tc.name, i%10)
				var obj *corev1.ConfigMap
				if i < 10 {
					obj, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"i": "0"}}, metav1.CreateOptions{})
				} else {
					patch := fmt.Appendf(nil, `{"data":{"i":"%d"}}`, i)
					obj, err = cms.Patch(ctx, name, "application/merge-patch+json", patch, metav1.PatchOptions{})
				}
				if err != nil {
					t.Fatalf("write %d: %v", i, err)
				}
				wantRVs = append(wantRVs, obj.ResourceVersion)
			}

			var last int64
			for i, want := range wantRVs {
				select {
				case ev, ok := <-w.ResultChan():
					if !ok {
						t.Fatalf("watch closed after %d of %d events", i, writes)
					}
					wantType := watch.Modified
					if i < 10 {
						wantType = watch.Added
					}
					cm, isCM := ev.Object.(*corev1.ConfigMap)
					if ev.Type != wantType || !isCM {
						t.Fatalf("event %d = %s %T, want %s ConfigMap", i, ev.Type, ev.Object, wantType)
					}
					rv := revision(t, cm.ResourceVersion)
					if rv <= last {
						t.Fatalf("event %d has revision %d after %d: out of order or duplicate", i, rv, last)
					}
					last = rv
					if cm.ResourceVersion != want {
						t.Fatalf("event %d has resourceVersion %s, want %s (the write's own revision)", i, cm.ResourceVersion, want)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("no event %d of %d within 10s", i, writes)
				}
			}
		})
	}
}

// M6: once the start revision is compacted away the watch
// cannot catch up; the client gets an ERROR event with 410 Expired and must
// relist. This is etcd's answer, so the watch cache is off here: with it on,
// the same watch is served from the cache's window until the window moves
// past it (watchcache_test.go).
func TestWatchFromCompactedRevisionReturns410(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) { c.WatchCache.Enabled = false }})
	ctx := framework.Context(t, 30*time.Second)
	cms := s.Clientset.CoreV1().ConfigMaps("default")
	first, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	var last *corev1.ConfigMap
	for _, name := range []string{"b", "c"} {
		if last, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create: %v", err)
		}
	}
	// etcd keeps the compaction revision itself readable, so compact past
	// first+1: the events right after first are gone.
	if _, err := s.Etcd.Compact(ctx, revision(t, last.ResourceVersion)); err != nil {
		t.Fatalf("compact: %v", err)
	}

	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	select {
	case ev := <-w.ResultChan():
		status, ok := ev.Object.(*metav1.Status)
		if ev.Type != watch.Error || !ok {
			t.Fatalf("first event = %s %T, want ERROR carrying a Status", ev.Type, ev.Object)
		}
		if status.Code != http.StatusGone || status.Reason != metav1.StatusReasonExpired {
			t.Errorf("status = %d %s, want 410 Expired", status.Code, status.Reason)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no ERROR event within 10s")
	}
}

// client-go v0.37 informers start with a streaming watch-list request
// (sendInitialEvents); they must sync and then see live changes.
func TestInformerSyncsAndSeesLiveChanges(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, 60*time.Second)
	pods := s.Clientset.CoreV1().Pods("default")
	if _, err := pods.Create(ctx, nginxPod("before"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}

	factory := informers.NewSharedInformerFactoryWithOptions(s.Clientset, 0, informers.WithNamespace("default"))
	informer := factory.Core().V1().Pods().Informer()
	stop := make(chan struct{})
	factory.Start(stop)
	defer func() { close(stop); factory.Shutdown() }()
	syncCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), informer.HasSynced) {
		t.Fatal("informer did not sync within 15s")
	}
	if _, exists, _ := informer.GetStore().GetByKey("default/before"); !exists {
		t.Fatal("synced informer does not hold the pod created before it started")
	}
	if _, err := pods.Create(ctx, nginxPod("after"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	framework.Eventually(t, framework.StateTimeout, "informer to see pod created after sync", func() bool {
		_, exists, _ := informer.GetStore().GetByKey("default/after")
		return exists
	})
	if err := pods.Delete(ctx, "before", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	framework.Eventually(t, framework.StateTimeout, "informer to drop the deleted pod", func() bool {
		_, exists, _ := informer.GetStore().GetByKey("default/before")
		return !exists
	})
}
