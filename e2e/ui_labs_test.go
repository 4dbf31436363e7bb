package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/controlplane"
	"minicp/e2e/framework"
	"minicp/embedetcd"
	"minicp/lease"
	"minicp/ui"
	"minicp/watchcache"
)

// The live page during four labs: each test sets a lab's scene, checks the
// page shows it as minicp's endpoints report it, and saves the picture the
// lab embeds (MINICP_UI_SCREENSHOTS=docs/labs/img regenerates them).

// M6, M8, lab 03: a small pods window moves on; a
// watch from before it gets 410 although etcd still has the history.
func TestLivePageDuringTheWatchCacheLab(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.WatchCache.Sizes = map[string]int{"pods": 20}
		c.Nodes.Simulated = 3
		c.Nodes.LifecycleController = true
	}})
	ctx := framework.Context(t, 2*time.Minute)
	first := touchPodRepeatedly(ctx, t, s, "web", 40)
	page := startChromium(t, s.ControlPlane.LoginURL())
	waitDrawn(t, page, 1)
	page.eval(`document.querySelector('#zoom').click(), true`, nil)
	askExplain(t, page, "pods", first.ResourceVersion)
	want := getView[watchcache.WatchExplanation](t, s, "/debug/watchcache/pods/explain?resourceVersion="+first.ResourceVersion)
	if got := explainOutcome(page); got != watchcache.OutcomeExpired || want.Outcome != got {
		t.Fatalf("a watch from %s (before the 20-event window): page says %q, the cache %q; want both %q", first.ResourceVersion, got, want.Outcome, watchcache.OutcomeExpired)
	}
	if got := page.text("#etcd-compacted"); got != "never" {
		t.Errorf("etcd compacted to %q, want never: the 410 is the cache's, not etcd's", got)
	}
	page.screenshot(filepath.Join(screenshotDir(t), "03-watch-cache-live.png"))
}

// M11, M12, lab 05: a node that stops renewing is marked
// Unknown after the grace period, while its Lease key's etcd lease still
// counts down.
func TestLivePageDuringTheNodeLeaseLab(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.Nodes.Simulated = 3
		c.Nodes.LifecycleController = true
		// Upstream's timings (renew every 10 s, grace 50 s) scaled down
		// five-fold: renew every 2 s, grace 10 s.
		c.Nodes.Agent.LeaseDuration = 8 * time.Second
		c.Nodes.Controller.GracePeriod = 10 * time.Second
		c.Nodes.Controller.MonitorPeriod = time.Second
	}})
	ctx := framework.Context(t, 2*time.Minute)
	silentNode(ctx, t, s, "node-silent", 40)
	page := startChromium(t, s.ControlPlane.LoginURL())
	// The page first: asking the API every poll would be most of the load
	// the page's load panel shows.
	framework.Eventually(t, framework.StateTimeout, "the silent node to be Unknown on the page and in the API", func() bool {
		if page.text(`tr[data-node="node-silent"] [data-field="ready"]`) != "Unknown" || page.text(`tr[data-node="node-0"] [data-field="ready"]`) != "True" {
			return false
		}
		node, err := s.Clientset.CoreV1().Nodes().Get(ctx, "node-silent", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return readyStatus(node) == corev1.ConditionUnknown
	})
	if ttl := pageTTL(t, page, "node-silent"); ttl <= 0 || ttl >= 40 {
		t.Errorf("the silent node's etcd lease: TTL %d on the page, want it counting down from 40, not expired yet", ttl)
	}
	page.screenshot(filepath.Join(screenshotDir(t), "05-node-lease-live.png"))
}

// M13, lab 06: KeepAlive is not a Raft write; with lease
// checkpointing off, moving the etcd leader restarts the silent node's
// lease TTL at its full granted value.
func TestLivePageDuringTheLeaseCheckpointLab(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.Etcd.Members = 3
		c.Nodes.Simulated = 3
		c.Nodes.LifecycleController = true
	}})
	ctx := framework.Context(t, 2*time.Minute)
	silentNode(ctx, t, s, "node-silent", 40)
	page := startChromium(t, s.ControlPlane.LoginURL())
	framework.Eventually(t, framework.StateTimeout, "the silent node's TTL to count down to 33 s", func() bool {
		ttl := pageTTL(t, page, "node-silent")
		return ttl > 0 && ttl <= 33
	})
	before := getView[ui.EtcdView](t, s, ui.EtcdPath)
	cluster := s.ControlPlane.EtcdCluster()
	target := ""
	for _, m := range cluster.Members() {
		if m.Name() != before.Leader {
			target = m.Name()
			break
		}
	}
	if err := cluster.MoveLeader(ctx, target); err != nil {
		t.Fatal(err)
	}
	// Restarted, the TTL is back at 40 s plus the new leader's 1 s and
	// counts down from there; carried over, it would be 33 s or less.
	// 36 s leaves the page's one-second refresh five seconds to show it
	// on a loaded machine, and stays 3 s clear of a carried-over TTL.
	framework.Eventually(t, 20*time.Second, "the page to show the new leader and the silent node's TTL back near 40 s", func() bool {
		return page.text(fmt.Sprintf(`tr[data-member=%q] [data-field="role"]`, target)) == "★ leader" && pageTTL(t, page, "node-silent") >= 36
	})
	var flagged bool
	page.eval(`document.querySelector('tr[data-node="node-silent"] [data-field="ttl"]').dataset.restarted === "true"`, &flagged)
	if !flagged {
		t.Errorf("the silent node's TTL is back near 40 s without a renewal, but the page does not flag it as restarted")
	}
	after := getView[ui.EtcdView](t, s, ui.EtcdPath)
	if after.Leader != target || after.RaftTerm <= before.RaftTerm {
		t.Errorf("after move-leader: /debug/etcd says leader %s in term %d, want %s in a term after %d", after.Leader, after.RaftTerm, target, before.RaftTerm)
	}
	page.screenshot(filepath.Join(screenshotDir(t), "06-lease-checkpoint-live.png"))
}

// M6, M17, lab 10: etcd compacted
// past a revision the pods window still holds: the cache replays it, etcd
// alone could not.
func TestLivePageDuringTheCompactionLab(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.WatchCache.Sizes = map[string]int{"pods": 50}
	}})
	ctx := framework.Context(t, 2*time.Minute)
	touchPodRepeatedly(ctx, t, s, "web", 30)
	res, err := embedetcd.CompactKeep(ctx, s.Etcd, 10)
	if err != nil {
		t.Fatal(err)
	}
	page := startChromium(t, s.ControlPlane.LoginURL())
	framework.Eventually(t, 15*time.Second, "the page to show the compaction", func() bool {
		return page.text("#etcd-compacted") == strconv.FormatInt(res.Revision, 10)
	})
	probe := strconv.FormatInt(res.Revision-5, 10)
	askExplain(t, page, "pods", probe)
	want := getView[watchcache.WatchExplanation](t, s, "/debug/watchcache/pods/explain?resourceVersion="+probe)
	if got := explainOutcome(page); got != watchcache.OutcomeReplay || want.Outcome != got {
		t.Fatalf("a watch from %s (compacted in etcd, held in the window): page says %q, the cache %q; want both %q", probe, got, want.Outcome, watchcache.OutcomeReplay)
	}
	if note := page.text(`#explain-result [data-field="etcd-note"]`); !strings.Contains(note, "would get 410") {
		t.Errorf("the explainer's etcd note: got %q, want it to say etcd alone would answer 410", note)
	}
	page.screenshot(filepath.Join(screenshotDir(t), "10-compaction-live.png"))
}

// touchPodRepeatedly creates pod name in default and updates it n times;
// it returns the pod as first created.
func touchPodRepeatedly(ctx context.Context, t *testing.T, s *framework.Stack, name string, n int) *corev1.Pod {
	t.Helper()
	pods := s.Clientset.CoreV1().Pods("default")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	first, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur := first.DeepCopy()
	for i := range n {
		cur.Labels["touch"] = strconv.Itoa(i)
		if cur, err = pods.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return first
}

// silentNode registers a Ready node and its Lease (leaseDurationSeconds
// duration) through the API, then never renews it: a kubelet that died.
func silentNode(ctx context.Context, t *testing.T, s *framework.Stack, name string, duration int32) {
	t.Helper()
	node, err := s.Clientset.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}
	if _, err := s.Clientset.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	renew := metav1.NewMicroTime(time.Now())
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: lease.NodeLeaseNamespace},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &name, LeaseDurationSeconds: &duration, RenewTime: &renew},
	}
	if _, err := s.Clientset.CoordinationV1().Leases(lease.NodeLeaseNamespace).Create(ctx, l, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// pageTTL is the etcd lease TTL the page shows for a node; -1 if none.
func pageTTL(t *testing.T, p *browserPage, node string) int {
	t.Helper()
	var s string
	p.eval(fmt.Sprintf(`(document.querySelector('tr[data-node=%q] [data-field="ttl"]') || {dataset: {ttl: ""}}).dataset.ttl`, node), &s)
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// explainOutcome is the verdict the page's explainer shows.
func explainOutcome(p *browserPage) string {
	var s string
	p.eval(`(document.querySelector('#explain-result [data-outcome]') || {dataset: {outcome: ""}}).dataset.outcome`, &s)
	return s
}
