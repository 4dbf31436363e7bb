package watchcache

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/internal/testetcd"
	"minicp/internal/testsupport"
	"minicp/kinds"
	"minicp/registry"
)

// A resource added to the table gets a cache of its own, and loses it
// (its watches end) when it leaves; requests for it meanwhile are served
// by the Storage. Once closed, the cache no longer follows the table. Run
// with -race.
func TestResourcesAddedToTheTableAreCachedAndRemovedOnesAreNot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	table, err := registry.NewTable(kinds.Builtin()...)
	if err != nil {
		t.Fatal(err)
	}
	cluster := testetcd.Start(t)
	store, err := registry.NewStore(cluster.Client(), table, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cache, err := New(store, table, NewConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()

	// A second resource over config maps' objects, as a custom resource's
	// second version is a second resource over the same keys.
	cms, _ := table.Parse("configmaps")
	extra := &registry.Resource{GroupVersion: cms.GroupVersion, Name: "settings", SingularName: "setting",
		Kind: cms.Kind, ListKind: cms.ListKind, Namespaced: cms.Namespaced, Prefix: cms.Prefix,
		New: cms.New, NewList: cms.NewList}
	if err := table.Change(nil, []*registry.Resource{extra}); err != nil {
		t.Fatal(err)
	}
	rc := cache.cacheFor(extra)
	if rc == nil {
		t.Fatal("no cache for the resource added to the table")
	}
	if err := rc.waitReady(ctx); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default"}}
	if _, err := cache.Create(ctx, extra, "default", cm, registry.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := cache.Watch(ctx, extra, "", registry.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-w.ResultChan(); Unwrap(ev.Object).(*corev1.ConfigMap).Name != "a" {
		t.Fatalf("first event %v, want config map a", ev)
	}

	if err := table.Change([]*registry.Resource{extra}, nil); err != nil {
		t.Fatal(err)
	}
	if cache.cacheFor(extra) != nil {
		t.Fatal("the removed resource still has a cache")
	}
	testsupport.Eventually(t, 10*time.Second, "the removed resource's watch to end", func() bool {
		select {
		case _, open := <-w.ResultChan():
			return !open
		default:
			return false
		}
	})
	// Still answered, from etcd.
	if _, err := cache.Get(ctx, extra, "default", "a", registry.GetOptions{}); err != nil {
		t.Fatalf("GET of a removed resource's object: %v, want it read from etcd", err)
	}
	// Closed, the cache no longer follows the table.
	cache.Close()
	if got := table.Subscribers(); got != 0 {
		t.Errorf("after Close: the table has %d subscribers, want 0", got)
	}
}
