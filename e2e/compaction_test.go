package e2e

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"minicp/controlplane"
	"minicp/e2e/framework"
	"minicp/embedetcd"
	"minicp/kinds"
	"minicp/registry"
)

// compactedRevision reads how far etcd is compacted.
func compactedRevision(t *testing.T, s *framework.Stack) int64 {
	t.Helper()
	rev, err := embedetcd.CompactedRevision(framework.Context(t, 10*time.Second), s.Etcd)
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

func createConfigMap(t *testing.T, s *framework.Stack, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := s.Clientset.CoreV1().ConfigMaps("default").Create(framework.Context(t, 10*time.Second),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating ConfigMap %s: %v", name, err)
	}
	return cm
}

// M6: the apiserver compacts etcd on its own, every
// --etcd-compaction-interval, recording each round in compact_rev_key; a
// watch from before the compacted revision then gets 410 Gone (with the
// watch cache off, the history it resumes from is etcd's).
func TestApiserverCompactsEtcdEveryCompactionInterval(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.EtcdCompactionInterval = 50 * time.Millisecond
		c.WatchCache.Enabled = false
	}})
	first := createConfigMap(t, s, "first")
	createConfigMap(t, s, "second")
	rv := revision(t, first.ResourceVersion)
	framework.Eventually(t, framework.StateTimeout, "etcd to be compacted past the first write", func() bool {
		return compactedRevision(t, s) > rv+1
	})

	ctx := framework.Context(t, 10*time.Second)
	resp, err := s.Etcd.Get(ctx, registry.CompactRevKey)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("%s: %v (err %v), want the key the compactors share", registry.CompactRevKey, resp, err)
	}
	if v, err := strconv.ParseInt(string(resp.Kvs[0].Value), 10, 64); err != nil || v <= rv {
		t.Errorf("%s = %q, want a revision past %d", registry.CompactRevKey, resp.Kvs[0].Value, rv)
	}
	if got := s.ControlPlane.Compactor().CompactedRevision(); got <= rv {
		t.Errorf("the compactor reports revision %d, want past %d", got, rv)
	}

	w, err := s.Clientset.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	select {
	case ev := <-w.ResultChan():
		if status, ok := ev.Object.(*metav1.Status); ev.Type != watch.Error || !ok || status.Code != http.StatusGone {
			t.Fatalf("watch from a compacted resourceVersion: first event %s %v, want ERROR 410", ev.Type, ev.Object)
		}
	case <-ctx.Done():
		t.Fatal("no event on the watch from a compacted resourceVersion")
	}
}

// etcd's own auto-compaction (--auto-compaction-mode/-retention) runs in
// the embedded member whether or not the apiserver compacts.
func TestEtcdAutoCompactionRunsWithoutTheApiserversCompactor(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.EtcdCompactionInterval = 0
		c.Etcd.AutoCompactionMode = embedetcd.CompactionModePeriodic
		c.Etcd.AutoCompactionRetention = "1s"
	}})
	rv := revision(t, createConfigMap(t, s, "first").ResourceVersion)
	framework.Eventually(t, 20*time.Second, "etcd's periodic compactor to compact past the first write", func() bool {
		createConfigMap(t, s, "w"+strconv.FormatInt(time.Now().UnixNano(), 36))
		return compactedRevision(t, s) > rv
	})
	resp, err := s.Etcd.Get(framework.Context(t, 10*time.Second), registry.CompactRevKey)
	if err != nil || len(resp.Kvs) != 0 {
		t.Errorf("%s exists (err %v): the disabled apiserver compactor ran", registry.CompactRevKey, err)
	}
}

// Bad input: compacting to a revision etcd has not reached is refused, and
// nothing changes: the revision, the compaction and the old versions stay.
func TestCompactingToAFutureRevisionIsRefusedAndChangesNothing(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, 10*time.Second)
	first := createConfigMap(t, s, "first")
	before := currentRevision(t, s)
	_, err := embedetcd.Compact(ctx, s.Etcd, before+100)
	if !errors.Is(err, embedetcd.ErrFutureRevision) {
		t.Fatalf("compacting to %d with etcd at %d: got %v, want %v", before+100, before, err, embedetcd.ErrFutureRevision)
	}
	if after := currentRevision(t, s); after != before {
		t.Errorf("etcd revision moved %d -> %d", before, after)
	}
	if got := compactedRevision(t, s); got != 0 {
		t.Errorf("etcd compacted to %d, want untouched", got)
	}
	old, err := s.Etcd.Get(ctx, registry.KeyFor(mustConfigMaps(t), "default", "first"), clientv3.WithRev(revision(t, first.ResourceVersion)))
	if err != nil || len(old.Kvs) != 1 {
		t.Errorf("reading the first version at its revision: %v (err %v)", old, err)
	}
}

func mustConfigMaps(t *testing.T) *registry.Resource {
	t.Helper()
	res, ok := kinds.NewTable().Lookup(corev1.SchemeGroupVersion.WithResource("configmaps"))
	if !ok {
		t.Fatal("no configmaps resource")
	}
	return res
}
