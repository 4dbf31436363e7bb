package apiserver

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// histogramState reads a histogram's sample count and sum.
func histogramState(t *testing.T, o prometheus.Observer) (uint64, float64) {
	t.Helper()
	var m dto.Metric
	if err := o.(prometheus.Metric).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
}

// M6: what a relist costs is visible in the metrics —
// a LIST's bytes in apiserver_response_sizes; a watch-list's initial state
// in apiserver_watch_list_duration_seconds and its bytes, event by event,
// in apiserver_watch_events_sizes.
func TestListAndWatchListBytesAreCountedInMetrics(t *testing.T) {
	ts, _ := startWithEtcd(t)
	ctx := testContext(t)
	for i := range 3 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"k": "v"}}
		if _, err := ts.clientset(t).CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	m := ts.metrics

	listSizes := m.responseSizes.WithLabelValues("LIST", "", "v1", "configmaps", "", "namespace", "apiserver")
	count0, sum0 := histogramState(t, listSizes)
	resp := ts.do(t, http.MethodGet, "/api/v1/namespaces/default/configmaps", "")
	if resp.code != http.StatusOK {
		t.Fatalf("LIST: %d %s", resp.code, resp.body)
	}
	count1, sum1 := histogramState(t, listSizes)
	if count1-count0 != 1 || sum1-sum0 != float64(len(resp.body)) {
		t.Errorf("apiserver_response_sizes for the LIST: +%d samples, +%.0f bytes; want +1 and +%d", count1-count0, sum1-sum0, len(resp.body))
	}

	watchList := m.watchList.WithLabelValues("", "v1", "configmaps", "namespace")
	eventSizes := m.watchSizes.WithLabelValues("", "v1", "configmaps")
	events0 := counterValue(t, m.watchEvents.WithLabelValues("", "v1", "configmaps"))
	lists0, _ := histogramState(t, watchList)
	sizes0, bytes0 := histogramState(t, eventSizes)
	resp = ts.do(t, http.MethodGet, "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1", "")
	if resp.code != http.StatusOK {
		t.Fatalf("watch-list: %d %s", resp.code, resp.body)
	}
	lists1, _ := histogramState(t, watchList)
	sizes1, bytes1 := histogramState(t, eventSizes)
	events1 := counterValue(t, m.watchEvents.WithLabelValues("", "v1", "configmaps"))
	if lists1-lists0 != 1 {
		t.Errorf("apiserver_watch_list_duration_seconds: +%d samples, want +1", lists1-lists0)
	}
	// 3 ADDED events and the initial-events-end BOOKMARK.
	if events1-events0 != 4 || sizes1-sizes0 != 4 || bytes1-bytes0 != float64(len(resp.body)) {
		t.Errorf("watch events: +%.0f counted, +%d sized, +%.0f bytes; want +4, +4, +%d", events1-events0, sizes1-sizes0, bytes1-bytes0, len(resp.body))
	}
}
