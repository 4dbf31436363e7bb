package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/controlplane"
	"minicp/e2e/framework"
	"minicp/ui"
	"minicp/watchcache"
)

// The live page (/ui/) shows M5, M6, M8 and M11-M14 in one picture. These tests
// drive it in headless Chromium and hold it to what minicp's /debug
// endpoints, etcd and the API report at the same moment.

// screenshotDir is where the tests save their screenshots:
// $MINICP_UI_SCREENSHOTS if set (docs/labs/img regenerates the labs'
// pictures), else a directory under the system's temporary directory that
// outlives the test, so the picture can be looked at afterwards.
func screenshotDir(t *testing.T) string {
	if dir := os.Getenv("MINICP_UI_SCREENSHOTS"); dir != "" {
		return dir
	}
	dir := filepath.Join(os.TempDir(), "minicp-ui-screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// getView decodes a /debug view as read through the apiserver.
func getView[V any](t *testing.T, s *framework.Stack, path string) V {
	t.Helper()
	var v V
	resp, err := s.HTTP.Get(s.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", path, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return v
}

// waitDrawn waits until the page has refreshed n more times than now.
func waitDrawn(t *testing.T, p *browserPage, n int) {
	t.Helper()
	var start int
	p.eval(`document.body && document.body.dataset.refreshes ? Number(document.body.dataset.refreshes) : 0`, &start)
	framework.Eventually(t, 20*time.Second, fmt.Sprintf("the page to refresh %d more times", n), func() bool {
		var now int
		p.eval(`document.body && document.body.dataset.refreshes ? Number(document.body.dataset.refreshes) : 0`, &now)
		return now >= start+n
	})
}

// M5, M6, M8, M11-M14: the page's numbers are minicp's numbers. Its current
// revision is /debug/etcd's and etcd's own, a node's Ready state is the
// API's, a cache window is /debug/watchcache's, the explainer's verdict is
// the cache's; writes move the page; a minicp that stops answering is
// shown as such, not as a blank page.
func TestLivePageShowsWhatTheDebugEndpointsAndTheAPIReport(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.Nodes.Simulated = 3
		c.Nodes.LifecycleController = true
	}})
	ctx := framework.Context(t, 2*time.Minute)
	page := startChromium(t, s.ControlPlane.LoginURL())
	waitDrawn(t, page, 2)

	pageAgreesWithMinicp(ctx, t, s, page)
	page.screenshot(filepath.Join(screenshotDir(t), "live-page-overview.png"))
	writesMoveThePage(ctx, t, s, page)

	// A minicp that stops answering is said to, on every panel.
	s.Stop(t)
	framework.Eventually(t, 15*time.Second, "the page to say minicp is not answering", func() bool {
		var shown bool
		page.eval(`!document.querySelector('#banner').hidden && document.querySelector('#banner').textContent.includes('not answering')`, &shown)
		return shown && page.text("#panel-nodes .error") != ""
	})
	page.screenshot(filepath.Join(screenshotDir(t), "live-page-minicp-stopped.png"))
}

// pageAgreesWithMinicp checks the page's revision, a node and a cache
// window against /debug, etcd and the API, and asks the explainer about a
// resourceVersion before the window.
func pageAgreesWithMinicp(ctx context.Context, t *testing.T, s *framework.Stack, page *browserPage) {
	t.Helper()
	framework.Eventually(t, 15*time.Second, "the page's etcd revision to equal /debug/etcd's and etcd's", func() bool {
		before := getView[ui.EtcdView](t, s, ui.EtcdPath)
		shown := page.text("#etcd-revision")
		resp, err := s.Etcd.Get(ctx, "health")
		if err != nil {
			t.Fatal(err)
		}
		return shown == strconv.FormatInt(before.Revision, 10) && before.Revision == resp.Header.Revision
	})
	if got := page.text("#etcd-compacted"); got != "never" {
		t.Errorf("compacted revision on the page: got %q, want never", got)
	}

	node, err := s.Clientset.CoreV1().Nodes().Get(ctx, "node-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := page.text(`tr[data-node="node-0"] [data-field="ready"]`), string(readyStatus(node)); got != want {
		t.Errorf("node-0's Ready on the page: got %q, want the API's %q", got, want)
	}
	if ttl := pageTTL(t, page, "node-0"); ttl <= 0 || ttl > 40 {
		t.Errorf("node-0's etcd lease TTL on the page: got %d, want 1-40 s (its Lease key is bound to a 40 s etcd lease)", ttl)
	}

	framework.Eventually(t, framework.StateTimeout, "the page's pods window to equal /debug/watchcache's", func() bool {
		rs := getView[watchcache.ResourceStatus](t, s, "/debug/watchcache/pods")
		return pageInt(page, `tr[data-resource="pods"] [data-field="floor"]`) == rs.Window.OldestResourceVersion &&
			pageInt(page, `tr[data-resource="pods"] [data-field="rv"]`) == rs.ResourceVersion
	})

	// M6: before the window, 410; the page says what the cache says.
	askExplain(t, page, "pods", "1")
	want := getView[watchcache.WatchExplanation](t, s, "/debug/watchcache/pods/explain?resourceVersion=1")
	if got := explainOutcome(page); want.Outcome != watchcache.OutcomeExpired || got != want.Outcome {
		t.Fatalf("explaining a watch from 1: page %q, /debug/watchcache %q; want the cache's %q", got, want.Outcome, watchcache.OutcomeExpired)
	}
}

// writesMoveThePage creates a namespace, five pods and a node through the
// API and waits for the page's revision, tape, pods window and node table
// to show them.
func writesMoveThePage(ctx context.Context, t *testing.T, s *framework.Stack, page *browserPage) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "live-page"}}
	if _, err := s.Clientset.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var last *corev1.Pod
	for i := range 5 {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i)}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
		var err error
		if last, err = s.Clientset.CoreV1().Pods("live-page").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	learner := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "learner-node"}}
	if _, err := s.Clientset.CoreV1().Nodes().Create(ctx, learner, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	lastRV, err := strconv.ParseInt(last.ResourceVersion, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, framework.StateTimeout, "the page to show the new pods and node", func() bool {
		var tape []string
		page.eval(`[...document.querySelectorAll('#events tbody td:nth-child(4)')].map(td => td.textContent)`, &tape)
		return pageInt(page, "#etcd-revision") > lastRV && pageInt(page, `tr[data-resource="pods"] [data-field="rv"]`) >= lastRV &&
			page.text(`tr[data-resource="pods"] [data-field="objects"]`) == "5" && slices.Contains(tape, "live-page/web-4") &&
			page.text("#nodes-total") == "4" && page.text(`tr[data-node="learner-node"] [data-field="ready"]`) == "None"
	})
}

// pageInt is the whole number an element shows, or -1.
func pageInt(p *browserPage, selector string) int64 {
	n, err := strconv.ParseInt(p.text(selector), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// askExplain types a resourceVersion into the explainer and waits for
// its verdict.
func askExplain(t *testing.T, p *browserPage, resource, rv string) {
	t.Helper()
	p.eval(fmt.Sprintf(`(() => {
		document.querySelector('#explain-resource').value = %q;
		document.querySelector('#explain-rv').value = %q;
		document.querySelector('#explain-result').replaceChildren();
		document.querySelector('#explain button').click();
		return true;
	})()`, resource, rv), nil)
	framework.Eventually(t, framework.StateTimeout, "the explainer's verdict", func() bool {
		return p.text(`#explain-result`) != ""
	})
}

func readyStatus(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return "None"
}
