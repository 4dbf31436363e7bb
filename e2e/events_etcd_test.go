package e2e

import (
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"minicp/controlplane"
	"minicp/e2e/framework"
	"minicp/embedetcd"
	"minicp/internal/testetcd"
)

// createEvents writes n events about a pod in default through the API.
func createEvents(t *testing.T, s *framework.Stack, n int) {
	t.Helper()
	ctx := framework.Context(t, time.Minute)
	for i := range n {
		ev := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("web.%d", i)},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web", Namespace: "default"},
			Reason:         "Scheduled",
		}
		if _, err := s.Clientset.CoreV1().Events("default").Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating event %s: %v", ev.Name, err)
		}
	}
}

// countKeys counts the keys under prefix.
func countKeys(t *testing.T, c *clientv3.Client, prefix string) int64 {
	t.Helper()
	resp, err := c.Get(framework.Context(t, 10*time.Second), prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatalf("counting %s: %v", prefix, err)
	}
	return resp.Count
}

// M10: with --embedded-events-etcd, event keys (and their
// leases) live in the second etcd only; the API serves them as before.
func TestEventKeysLandOnlyInTheEventsEtcd(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) { c.Triage.EmbeddedEventsEtcd = true }})
	events := s.ControlPlane.EventsEtcdClient()
	if events == nil || len(s.ControlPlane.EventsEtcdEndpoints()) != 1 {
		t.Fatalf("no events etcd: %v", s.ControlPlane.EventsEtcdEndpoints())
	}
	ctx := framework.Context(t, time.Minute)
	w, err := s.Clientset.CoreV1().Events("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	createEvents(t, s, 5)

	if got := countKeys(t, events, "/registry/events/"); got != 5 {
		t.Errorf("event keys in the events etcd: %d, want 5", got)
	}
	if got := countKeys(t, s.Etcd, "/registry/events/"); got != 0 {
		t.Errorf("event keys in the main etcd: %d, want 0", got)
	}
	if got := countKeys(t, events, "/registry/pods/") + countKeys(t, events, "/registry/namespaces/"); got != 0 {
		t.Errorf("other keys in the events etcd: %d, want 0", got)
	}
	resp, err := events.Get(ctx, "/registry/events/default/web.0")
	if err != nil || len(resp.Kvs) != 1 || resp.Kvs[0].Lease == 0 {
		t.Fatalf("web.0 in the events etcd: %v %v, want a key bound to a lease", resp, err)
	}
	ttl, err := events.TimeToLive(ctx, clientv3.LeaseID(resp.Kvs[0].Lease))
	if err != nil || ttl.TTL <= 0 {
		t.Errorf("the event's lease in the events etcd: %v %v, want it alive", ttl, err)
	}

	list, err := s.Clientset.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 5 {
		t.Fatalf("listing events: %d items, %v; want 5", len(list.Items), err)
	}
	// resourceVersions of events are the events etcd's revisions.
	if list.ResourceVersion != fmt.Sprint(resp.Header.Revision) {
		t.Errorf("event list resourceVersion %s, want the events etcd's revision %d", list.ResourceVersion, resp.Header.Revision)
	}
	// The watch cache serves them from memory, at the events etcd's
	// revisions: a consistent LIST waits for that cluster's revision, not
	// the main one's, so it neither falls back to etcd nor misses a write.
	// 20 config maps put the main etcd's revision well past the events
	// etcd's, which a wait for the wrong cluster would never reach.
	createConfigMaps(t, s, "main", 20)
	sixth := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "web.5"}, InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web", Namespace: "default"}, Reason: "Pulled"}
	if _, err := s.Clientset.CoreV1().Events("default").Create(ctx, sixth, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err = s.Clientset.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 6 {
		t.Fatalf("listing events after a sixth: %d items, %v; want 6", len(list.Items), err)
	}
	st := cacheStatus(t, s, "events")
	if !st.Cached || st.CacheState == nil {
		t.Fatalf("events are not cached: %+v", st)
	}
	if st.ListsFromCache < 2 || st.ConsistentFallback != 0 {
		t.Fatalf("events cache: %d lists from memory, %d consistent lists fell back to etcd; want both from memory, none to etcd", st.ListsFromCache, st.ConsistentFallback)
	}
	now, err := events.Get(ctx, "/registry/events/default/web.5")
	if err != nil || len(now.Kvs) != 1 {
		t.Fatalf("web.5 in the events etcd: %v %v", now, err)
	}
	if st.EtcdRevision != now.Header.Revision || list.ResourceVersion != fmt.Sprint(now.Header.Revision) {
		t.Errorf("events cache at etcd revision %d, list at %s; want the events etcd's %d", st.EtcdRevision, list.ResourceVersion, now.Header.Revision)
	}
	seen := 0
	deadline := time.After(10 * time.Second)
	for seen < 6 {
		select {
		case ev := <-w.ResultChan():
			if ev.Type == watch.Added {
				seen++
			}
		case <-deadline:
			t.Fatalf("the events watch saw %d of 6 events", seen)
		}
	}
}

// --etcd-servers-overrides=/events#URL, upstream's flag, sends events to an
// etcd minicp did not start.
func TestEtcdServersOverridesSendEventsToAnotherCluster(t *testing.T) {
	external := testetcd.Start(t, func(c *embedetcd.Config) { c.Name = "external-events" })
	// Registered after the external etcd's cleanup, so minicp stops first.
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.Triage.EtcdServersOverrides = []string{"/events#" + external.Endpoints()[0]}
	}})
	createEvents(t, s, 3)
	if got := countKeys(t, external.Client(), "/registry/events/default/"); got != 3 {
		t.Errorf("event keys in the override etcd: %d, want 3", got)
	}
	if got := countKeys(t, s.Etcd, "/registry/events/"); got != 0 {
		t.Errorf("event keys in the main etcd: %d, want 0", got)
	}
}

func TestAnOverrideForAResourceMinicpDoesNotServeIsRefused(t *testing.T) {
	cfg := controlplane.NewConfig()
	cfg.DataDir = t.TempDir()
	cfg.Triage.EtcdServersOverrides = []string{"example.com/widgets#http://127.0.0.1:2479"}
	if err := cfg.Validate(); err == nil {
		t.Error("an override for example.com/widgets was accepted")
	}
	cfg.Triage.EtcdServersOverrides = []string{"/events#http://127.0.0.1:2479"}
	cfg.Triage.EmbeddedEventsEtcd = true
	if err := cfg.Validate(); err == nil {
		t.Error("--embedded-events-etcd together with an /events override was accepted")
	}
}
