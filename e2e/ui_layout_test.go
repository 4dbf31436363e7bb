package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/controlplane"
	"minicp/e2e/framework"
)

// resize makes the page's viewport width x height CSS pixels, as a
// browser window of that size would.
func (p *browserPage) resize(width, height int) {
	p.t.Helper()
	p.call("Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil)
}

// cacheRow is one row of the page's cache table: each row's resource,
// the name it shows, whether it is empty and whether it is displayed, in
// the table's order.
type cacheRow struct {
	Resource string `json:"resource"`
	Name     string `json:"name"`
	Empty    bool   `json:"empty"`
	Shown    bool   `json:"shown"`
}

// cacheRows reads the cache table's rows, in its order.
func cacheRows(p *browserPage) []cacheRow {
	var rows []cacheRow
	p.eval(`[...document.querySelectorAll('#windows tbody tr[data-resource]')].map((tr) => ({
		resource: tr.dataset.resource,
		name: tr.querySelector('td.res').textContent.trim(),
		empty: tr.dataset.empty === 'true',
		shown: tr.getClientRects().length > 0,
	}))`, &rows)
	return rows
}

// axisRowLabels are the names of the rows the axes draw, as shown (a
// label shortened to fit carries its full name as a title, not shown).
func axisRowLabels(p *browserPage) []string {
	var labels []string
	p.eval(`[...document.querySelectorAll('svg.axis text.row-label')].map((t) => t.firstChild.nodeValue)`, &labels)
	return labels
}

// M5, M6: at 1,280 px, the revision panel shows all seven columns of its
// cache table; the two events caches (core and events.k8s.io) read apart,
// on the table and on the axis; the caches that hold something come
// first and the empty ones are folded into one line that opens them.
func TestLivePageFitsItsCacheTableAt1280PxAndFoldsTheEmptyCaches(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) { c.Nodes.Simulated = 0 }})
	ctx := framework.Context(t, 2*time.Minute)
	if _, err := s.Clientset.EventsV1().Events("default").Create(ctx, newEventsV1("both-groups"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	page := startChromium(t, s.ControlPlane.LoginURL())
	page.resize(1280, 1000)
	framework.Eventually(t, 20*time.Second, "both events caches to be drawn on the axis", func() bool {
		return axisHasWindow(page, "events") && axisHasWindow(page, "events.events.k8s.io")
	})
	var viewport int
	page.eval(`document.documentElement.clientWidth`, &viewport)
	if viewport != 1280 {
		t.Fatalf("the viewport is %d px wide, want 1280", viewport)
	}

	var cut []string
	page.eval(`(() => {
		const p = document.querySelector('#panel-revisions').getBoundingClientRect();
		return [...document.querySelectorAll('#windows thead th')]
			.filter((th) => { const r = th.getBoundingClientRect(); return r.width === 0 || r.left < p.left || r.right > p.right; })
			.map((th) => th.textContent);
	})()`, &cut)
	var columns int
	page.eval(`document.querySelectorAll('#windows thead th').length`, &columns)
	if columns != 7 || len(cut) > 0 {
		t.Errorf("at 1280 px the cache table has %d columns, these not fully visible: %v; want all 7 visible", columns, cut)
	}

	rows := cacheRows(page)
	names := map[string]string{}
	for _, r := range rows {
		if other, dup := names[r.Name]; dup {
			t.Errorf("the table names %s and %s alike: %q", other, r.Resource, r.Name)
		}
		names[r.Name] = r.Resource
	}
	labels := axisRowLabels(page)
	for i, l := range labels {
		if slices.Contains(labels[:i], l) {
			t.Errorf("two axis rows are labelled %q: %v", l, labels)
		}
	}
	for _, want := range []string{"events (core)", "events (events.k8s.io)"} {
		if !slices.Contains(labels, want) {
			t.Errorf("no axis row labelled %q: %v", want, labels)
		}
	}

	folded := checkFolded(t, rows)
	if got, want := page.text("#windows .fold-toggle"), fmt.Sprintf("%d empty caches", folded); !strings.Contains(got, want) {
		t.Errorf("the table's fold line says %q, want it to count %q", got, want)
	}
	if bad := overlappingLabels(page); len(bad) > 0 {
		t.Errorf("overlapping labels on the axis: %v", bad)
	}
	page.screenshot(filepath.Join(screenshotDir(t), "live-page-1280.png"))

	// Opening the fold line shows every empty cache, on the table and on the axis.
	page.eval(`document.querySelector('#windows .fold-toggle').click()`, nil)
	framework.Eventually(t, 20*time.Second, "the empty caches to be shown when their line is opened", func() bool {
		rows := cacheRows(page)
		for _, r := range rows {
			if r.Empty && (!r.Shown || !axisHasWindow(page, r.Resource)) {
				return false
			}
		}
		return true
	})
	if bad := overlappingLabels(page); len(bad) > 0 {
		t.Errorf("overlapping labels on the opened axis: %v", bad)
	}
}

// checkFolded checks that the caches holding something come before the
// empty ones, which are there but hidden, and returns how many are empty.
func checkFolded(t *testing.T, rows []cacheRow) int {
	t.Helper()
	empties := 0
	for i, r := range rows {
		switch {
		case r.Empty:
			empties++
			if r.Shown {
				t.Errorf("the empty cache %s is shown before its line is opened", r.Resource)
			}
		case empties > 0:
			t.Errorf("%s holds something but comes after an empty cache (row %d)", r.Resource, i)
		case !r.Shown:
			t.Errorf("%s holds something but is not shown", r.Resource)
		}
	}
	if empties < 10 {
		t.Errorf("%d empty caches on a fresh minicp; want most of its 40-odd kinds empty, folded", empties)
	}
	return empties
}

// axisHasWindow says whether an axis draws resource's cache window.
func axisHasWindow(p *browserPage, resource string) bool {
	var ok bool
	p.eval(fmt.Sprintf(`!!document.querySelector('svg.axis rect.window[data-resource=%q]')`, resource), &ok)
	return ok
}
