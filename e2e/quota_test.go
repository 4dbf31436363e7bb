package e2e

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"minicp/controlplane"
	"minicp/e2e/framework"
	"minicp/embedetcd"
)

// readyz returns the status code and body of GET /readyz.
func readyz(t *testing.T, s *framework.Stack) (int, string) {
	t.Helper()
	resp, err := s.HTTP.Get(s.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// quotaFiller rewrites a few ConfigMaps with large values, so that history,
// not live data, fills etcd. Each value starts with the number of its
// write; acked remembers the last acknowledged one per ConfigMap, and
// refused the write etcd answered NOSPACE.
type quotaFiller struct {
	acked   map[string]int
	refused struct {
		name string
		n    int
	}
}

func (f *quotaFiller) fill(t *testing.T, s *framework.Stack) error {
	t.Helper()
	ctx := framework.Context(t, time.Minute)
	cms := s.Clientset.CoreV1().ConfigMaps("default")
	big := strings.Repeat("x", 100<<10)
	for i := 0; i < 2000; i++ {
		name := fmt.Sprintf("fill-%d", i%4)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"n": strconv.Itoa(i), "big": big}}
		var err error
		if _, ok := f.acked[name]; ok {
			_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		} else {
			_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
		}
		if err != nil {
			f.refused.name, f.refused.n = name, i
			return err
		}
		f.acked[name] = i
	}
	t.Fatal("etcd accepted 200 MB with a 3 MiB quota")
	return nil
}

// M17: past --quota-backend-bytes etcd raises NOSPACE.
// Writes get a 500 carrying etcd's message and the way out; /readyz names
// the alarm; reads and watches go on. Compact, defragment and disarm let
// writes in again, and no acknowledged write is lost.
func TestNoSpaceAlarmRefusesWritesUntilCompactDefragDisarmAndLosesNothing(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.Etcd.QuotaBackendBytes = 3 << 20
	}})
	ctx := framework.Context(t, 2*time.Minute)
	factory := informers.NewSharedInformerFactoryWithOptions(s.Clientset, 0, informers.WithNamespace("default"))
	informer := factory.Core().V1().ConfigMaps().Informer()
	stop := make(chan struct{})
	factory.Start(stop)
	defer func() { close(stop); factory.Shutdown() }()
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatal("informer did not sync")
	}

	f := &quotaFiller{acked: map[string]int{}}
	err := f.fill(t, s)
	crossing := err
	if status, ok := err.(apierrors.APIStatus); !ok || status.Status().Code != http.StatusInternalServerError ||
		!strings.Contains(err.Error(), "database space exceeded") || !strings.Contains(err.Error(), "alarm disarm") {
		t.Fatalf("the write past the quota: got %v, want 500 with etcd's message and how to recover", err)
	}
	_, err = s.Clientset.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "small"}}, metav1.CreateOptions{})
	if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "database space exceeded") {
		t.Fatalf("a small write under the alarm: got %v, want the same 500", err)
	}
	alarms, err := embedetcd.ListAlarms(ctx, s.Etcd)
	if err != nil || len(alarms) != 1 || alarms[0].Alarm != "NOSPACE" {
		t.Fatalf("alarms: %v (err %v), want one NOSPACE", alarms, err)
	}
	if code, body := readyz(t, s); code != http.StatusInternalServerError || !strings.Contains(body, "[-]etcd failed: etcd alarm NOSPACE on member") {
		t.Errorf("/readyz under the alarm: %d %q, want 500 naming NOSPACE", code, body)
	}

	// Reads and watches keep working; deletes too (they free space).
	list, err := s.Clientset.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != len(f.acked) {
		t.Fatalf("LIST under the alarm: %d items (err %v), want %d", len(list.Items), err, len(f.acked))
	}
	if err := s.Clientset.CoreV1().ConfigMaps("default").Delete(ctx, "fill-3", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("DELETE under the alarm: %v", err)
	}
	delete(f.acked, "fill-3")
	framework.Eventually(t, framework.StateTimeout, "the informer to see the delete made under the alarm", func() bool {
		_, exists, _ := informer.GetStore().GetByKey("default/fill-3")
		return !exists
	})

	// The way out, in order.
	if _, err := embedetcd.CompactKeep(ctx, s.Etcd, 0); err != nil {
		t.Fatalf("compact: %v", err)
	}
	defrag, err := embedetcd.Defragment(ctx, s.Etcd)
	if err != nil || defrag[0].After >= 3<<20 {
		t.Fatalf("defrag: %+v (err %v), want the file below the quota", defrag, err)
	}
	if _, err := embedetcd.DisarmAlarms(ctx, s.Etcd); err != nil {
		t.Fatalf("disarm: %v", err)
	}
	if code, body := readyz(t, s); code != http.StatusOK {
		t.Errorf("/readyz after recovery: %d %q, want 200", code, body)
	}
	if _, err := s.Clientset.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "small"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a write after recovery: %v", err)
	}

	// No acknowledged write lost, and the NOSPACE error told the truth:
	// each ConfigMap holds its last acknowledged write, except the one the
	// refused write was for, which holds that write if and only if the
	// error said etcd applied it (etcd checks the quota before proposing a
	// write and again when applying it).
	list, err = s.Clientset.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, cm := range list.Items {
		if n, err := strconv.Atoi(cm.Data["n"]); err == nil {
			got[cm.Name] = n
		}
	}
	want := maps.Clone(f.acked)
	if strings.Contains(crossing.Error(), "etcd applied this write") {
		want[f.refused.name] = f.refused.n
	} else if !strings.Contains(crossing.Error(), "nothing was written") {
		t.Errorf("the NOSPACE error does not say what etcd did with the write: %v", crossing)
	}
	for name, n := range want {
		if name == "fill-3" {
			continue // deleted under the alarm
		}
		if g, ok := got[name]; !ok || g != n {
			t.Errorf("%s after recovery holds write %d (present %t), want write %d (error: %v)", name, g, ok, n, crossing)
		}
	}
	t.Logf("acknowledged before the alarm: %v; after recovery: %v; defrag %d -> %d bytes", f.acked, got, defrag[0].Before, defrag[0].After)
}
