package e2e

import (
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/controlplane"
	"minicp/e2e/framework"
	"minicp/embedetcd"
	"minicp/relist"
)

// configMapState lists the ConfigMaps of "default" as name -> resourceVersion.
func configMapState(t *testing.T, s *framework.Stack) map[string]string {
	t.Helper()
	list, err := s.Clientset.CoreV1().ConfigMaps("default").List(framework.Context(t, 10*time.Second), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, cm := range list.Items {
		out[cm.Name] = cm.ResourceVersion
	}
	return out
}

func configMapOps(t *testing.T, s *framework.Stack) (create func(string) string, update func(string) string, del func(string) string) {
	ctx := framework.Context(t, time.Minute)
	cms := s.Clientset.CoreV1().ConfigMaps("default")
	create = func(name string) string {
		t.Helper()
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		return cm.ResourceVersion
	}
	update = func(name string) string {
		t.Helper()
		cm, err := cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": "2"}}, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update %s: %v", name, err)
		}
		return cm.ResourceVersion
	}
	del = func(name string) string {
		t.Helper()
		if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete %s: %v", name, err)
		}
		return ""
	}
	return create, update, del
}

// M16: an informer synced at revision X; etcd restored
// from an older snapshot. Without a revision bump the next writes reuse
// revisions at or below X: the informer, resuming from X, silently misses
// them and keeps objects etcd no longer has. With --bump-revision past X and
// --mark-compacted it gets 410, relists and converges to etcd's state. The
// same holds with the watch cache off and on.
func TestRestoreFromAnOlderSnapshotWithAndWithoutRevisionBump(t *testing.T) {
	for _, cacheOn := range []bool{false, true} {
		for _, bump := range []uint64{0, 1000} {
			name := fmt.Sprintf("cache %s, bump %d", map[bool]string{false: "off", true: "on"}[cacheOn], bump)
			t.Run(name, func(t *testing.T) { runRestoreScenario(t, cacheOn, bump) })
		}
	}
}

func runRestoreScenario(t *testing.T, cacheOn bool, bump uint64) {
	configure := func(c *controlplane.Config) { c.WatchCache.Enabled = cacheOn }
	a := framework.Start(t, framework.Options{Configure: configure})
	ctx := framework.Context(t, 2*time.Minute)
	create, update, del := configMapOps(t, a)
	for _, n := range []string{"a", "b", "c"} {
		create(n)
	}
	snapshot := filepath.Join(t.TempDir(), "snap.db")
	info, err := embedetcd.SaveSnapshot(ctx, a.ControlPlane.EtcdEndpoints()[0], snapshot, nil)
	if err != nil {
		t.Fatal(err)
	}

	link, err := relist.NewLink(strings.TrimPrefix(a.URL, "https://"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	viaLink := *a.RESTConfig
	viaLink.Host = link.URLFor(a.URL)
	inf, err := relist.NewInformer("informer", &viaLink, "default", relist.InformerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	inf.Start(ctx)
	defer inf.Stop()
	if err := inf.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	// After the snapshot: a changes, b goes, d comes. The informer sees it
	// all on its watch and ends at X.
	update("a")
	del("b")
	create("d")
	// A restarted apiserver writes first (the kubernetes Service and its
	// endpoints follow it to its new port), taking some of the revisions
	// between the snapshot and X: leave room for them, and for writes
	// of the test's own below X.
	for range 2 {
		create("e")
		del("e")
	}
	fence := revision(t, create("f")) // the informer has seen everything once it has f
	before := configMapState(t, a)
	framework.Eventually(t, framework.StateTimeout, "the informer to reach the state before the restore", func() bool {
		return maps.Equal(inf.Contents(), before) && revision(t, inf.LastSyncResourceVersion()) >= fence
	})
	x := revision(t, inf.LastSyncResourceVersion())

	link.Cut()
	a.Stop(t)
	dir := t.TempDir()
	res, err := controlplane.RestoreSnapshot(dir, snapshot, bump, bump > 0)
	if err != nil {
		t.Fatal(err)
	}
	// The restored cluster keeps its credentials: the same token and CA.
	framework.CopyCredentials(t, a.DataDir, dir)
	b := framework.Start(t, framework.Options{DataDir: dir, Configure: configure})
	link.SetTarget(strings.TrimPrefix(b.URL, "https://"))
	create, _, _ = configMapOps(t, b)
	// Write until a revision past X: without a bump the first writes land
	// at or below X.
	var written []string
	for i := 0; len(written) == 0 || currentRevision(t, b) <= x+1; i++ {
		name := fmt.Sprintf("new-%d", i)
		create(name)
		written = append(written, name)
	}
	after := configMapState(t, b)
	before0 := inf.Counts()
	link.Restore()

	if bump == 0 {
		if res.Revision >= x {
			t.Fatalf("restored etcd starts at %d, not below the informer's %d: the scenario did not set up what it names", res.Revision, x)
		}
		// The informer gets only the writes past X; wait for the last.
		last := written[len(written)-1]
		framework.Eventually(t, framework.StateTimeout, "the informer to get the writes past its revision", func() bool {
			return inf.Holds(map[string]string{last: after[last]})
		})
		got := inf.Contents()
		t.Logf("snapshot at %d, informer at %d, etcd after the restore and %d writes: %s; informer: %s",
			info.Revision, x, len(written), relist.FormatContents(after), relist.FormatContents(got))
		if got["d"] == "" || after["d"] != "" {
			t.Errorf("d: informer %q, etcd %q; want the informer to keep d, which etcd no longer has", got["d"], after["d"])
		}
		if got["b"] != "" || after["b"] == "" {
			t.Errorf("b: informer %q, etcd %q; want b back in etcd and missing from the informer", got["b"], after["b"])
		}
		if got["a"] == after["a"] {
			t.Errorf("a: informer and etcd agree on %s; want the informer to keep its newer, vanished version", got["a"])
		}
		missed := 0
		for _, n := range written {
			if revision(t, after[n]) <= x && got[n] == "" {
				missed++
			}
		}
		if missed == 0 {
			t.Errorf("the informer missed no write at or below its revision %d", x)
		}
		if c := inf.Counts().Sub(before0); c.Expired != 0 || c.Relists() != 0 {
			t.Errorf("informer requests after the restore: %+v; want no 410 and no relist (the failure is silent)", c)
		}
		return
	}

	framework.Eventually(t, 20*time.Second, "the informer to converge to etcd's state", func() bool {
		return maps.Equal(inf.Contents(), configMapState(t, b))
	})
	c := inf.Counts().Sub(before0)
	t.Logf("snapshot at %d, bumped to %d; informer (was at %d) converged after %+v: %s", info.Revision, res.Revision, x, c, relist.FormatContents(inf.Contents()))
	if c.Expired < 1 || c.Relists() < 1 {
		t.Errorf("informer requests after the bumped restore: %+v; want a 410 and a relist", c)
	}
}
