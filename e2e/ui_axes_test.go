package e2e

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/controlplane"
	"minicp/e2e/framework"
	"minicp/ui"
)

// overlappingLabels returns every pair of texts on the page's revision
// axes whose bounding boxes overlap, as "a / b".
func overlappingLabels(p *browserPage) []string {
	var bad []string
	p.eval(`(() => {
		const bad = [];
		for (const axis of document.querySelectorAll('svg.axis')) {
			const ts = [...axis.querySelectorAll('text')].map((t) => ({ s: t.textContent, r: t.getBoundingClientRect() })).filter((x) => x.r.width > 0);
			for (let i = 0; i < ts.length; i++) for (let j = i + 1; j < ts.length; j++) {
				const a = ts[i].r, b = ts[j].r;
				if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) bad.push(ts[i].s + ' / ' + ts[j].s);
			}
		}
		return bad;
	})()`, &bad)
	return bad
}

// axisText is the text of the first element matching selector inside the
// axis of cluster.
func axisText(p *browserPage, cluster, selector string) string {
	return p.text(fmt.Sprintf(`.cluster-axis[data-cluster=%q] %s`, cluster, selector))
}

// M5, M6, M8: on a history that dwarfs the windows (ten events kept per
// resource, a hundred and fifty writes, etcd compacted to its current
// revision), the axis zooms by itself so the windows are not slivers, and
// "now" and "compacted", one revision apart, stay readable: no two labels
// overlap.
func TestLivePageAxisZoomsByItselfAndItsLabelsNeverOverlap(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.WatchCache.DefaultSize = 10
		c.WatchCache.Sizes = map[string]int{}
		c.Nodes.Simulated = 0
	}})
	ctx := framework.Context(t, 2*time.Minute)
	cms := s.Clientset.CoreV1().ConfigMaps("default")
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "busy"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 150 {
		cm.Data = map[string]string{"n": strconv.Itoa(i)}
		if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rev, err := strconv.ParseInt(cm.ResourceVersion, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Etcd.Compact(ctx, rev); err != nil {
		t.Fatal(err)
	}

	page := startChromium(t, s.ControlPlane.LoginURL())
	framework.Eventually(t, 20*time.Second, "the main axis to show the compaction", func() bool {
		return axisText(page, "main", "text.compacted-label") == fmt.Sprintf("compacted %d", rev)
	})
	waitDrawn(t, page, 1)
	var zoomed string
	page.eval(`document.querySelector('svg.axis[data-cluster="main"]').dataset.zoomed`, &zoomed)
	if zoomed != "true" {
		t.Errorf("the axis did not zoom by itself on a history of %d revisions with 10-event windows", rev)
	}
	var fraction float64
	page.eval(`(() => {
		const axis = document.querySelector('svg.axis[data-cluster="main"]');
		const held = axis.querySelector('rect.held[data-resource="configmaps"]');
		return held ? held.getBoundingClientRect().width / axis.getBoundingClientRect().width : 0;
	})()`, &fraction)
	if fraction < 0.2 {
		t.Errorf("the configmaps window's held events take %.1f%% of the axis, want a readable share (at least 20%%)", 100*fraction)
	}
	if !strings.Contains(axisText(page, "main", ".cluster-head"), "zoomed to") {
		t.Errorf("the axis head does not say it is zoomed: %q", axisText(page, "main", ".cluster-head"))
	}
	if bad := overlappingLabels(page); len(bad) > 0 {
		t.Errorf("overlapping labels on the axis: %v", bad)
	}
	page.screenshot(filepath.Join(screenshotDir(t), "live-page-axis-zoomed.png"))
}

// M10: with events on their own etcd, each cluster has its own axis,
// counting its own revisions, with its own members listed, and the
// events cache is drawn on the events etcd's axis, not on the main one's.
func TestLivePageDrawsEachEtcdClusterOnItsOwnAxis(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.Triage.EmbeddedEventsEtcd = true
		c.Nodes.Simulated = 0
	}})
	ctx := framework.Context(t, time.Minute)
	for i := range 3 {
		ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ev-%d", i)}, InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Name: "x", Namespace: "default"}, Reason: "Test", Message: "on the events etcd", Type: corev1.EventTypeNormal}
		if _, err := s.Clientset.CoreV1().Events("default").Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	page := startChromium(t, s.ControlPlane.LoginURL())
	framework.Eventually(t, 20*time.Second, "each axis's now to be its own cluster's revision", func() bool {
		view := getView[ui.EtcdView](t, s, ui.EtcdPath)
		if len(view.Clusters) != 2 || view.Clusters[1].Name != "events" {
			t.Fatalf("/debug/etcd clusters: %+v, want main and events", view.Clusters)
		}
		return axisText(page, "main", "text.current-label") == fmt.Sprintf("now %d", view.Clusters[0].Revision) &&
			axisText(page, "events", "text.current-label") == fmt.Sprintf("now %d", view.Clusters[1].Revision)
	})
	var onMain, onEvents bool
	page.eval(`!!document.querySelector('svg.axis[data-cluster="main"] rect.window[data-resource="events"]')`, &onMain)
	page.eval(`!!document.querySelector('svg.axis[data-cluster="events"] rect.window[data-resource="events"]')`, &onEvents)
	if onMain || !onEvents {
		t.Errorf("the events cache: on the main axis %t, on the events axis %t; want only on the events axis", onMain, onEvents)
	}
	if got := axisText(page, "main", `[data-member="minicp-etcd"]`); !strings.HasPrefix(got, "minicp-etcd") {
		t.Errorf("the main axis lists member %q, want minicp-etcd", got)
	}
	if got := axisText(page, "events", `[data-member="minicp-events-etcd"]`); !strings.HasPrefix(got, "minicp-events-etcd") {
		t.Errorf("the events axis lists member %q, want minicp-events-etcd", got)
	}
	if bad := overlappingLabels(page); len(bad) > 0 {
		t.Errorf("overlapping labels on the axes: %v", bad)
	}
	page.screenshot(filepath.Join(screenshotDir(t), "live-page-two-clusters.png"))
}
