package apiserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// counterValue reads a counter's current value.
func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func TestRequestCounterIncrementsPerObservedRequest(t *testing.T) {
	m := newMetrics(prometheus.NewRegistry())
	counter := m.requests.WithLabelValues("LIST", "", "v1", "pods", "", "namespace", "apiserver", "200")
	before := counterValue(t, counter)
	m.observe("list", "", "v1", "pods", "", "namespace", 200, 30*time.Millisecond)
	m.observe("LIST", "", "v1", "pods", "", "namespace", 200, 70*time.Millisecond)
	if got := counterValue(t, counter) - before; got != 2 {
		t.Errorf("apiserver_request_total grew by %v, want 2", got)
	}
}

func TestNewMetricsTwiceOnOneRegistrySharesOneSetOfCollectors(t *testing.T) {
	reg := prometheus.NewRegistry()
	first, second := newMetrics(reg), newMetrics(reg)
	if first.requests != second.requests || first.duration != second.duration {
		t.Fatal("second newMetrics registered new collectors instead of reusing the first ones")
	}
	counter := first.requests.WithLabelValues("GET", "coordination.k8s.io", "v1", "leases", "", "resource", "apiserver", "404")
	before := counterValue(t, counter)
	second.observe("GET", "coordination.k8s.io", "v1", "leases", "", "resource", 404, time.Millisecond)
	if got := counterValue(t, counter) - before; got != 1 {
		t.Errorf("counter seen through the first metrics grew by %v, want 1", got)
	}
}

// Two stacks in one process (two registries) share no series.
func TestMetricsOfTwoRegistriesAreSeparate(t *testing.T) {
	first, second := newMetrics(prometheus.NewRegistry()), newMetrics(prometheus.NewRegistry())
	second.observe("GET", "", "v1", "pods", "", "resource", 200, time.Millisecond)
	if got := counterValue(t, first.requests.WithLabelValues("GET", "", "v1", "pods", "", "resource", "apiserver", "200")); got != 0 {
		t.Errorf("a request observed by the second stack shows in the first: %v, want 0", got)
	}
}

func TestMetricsEndpointExposesRequestSeriesWithUpstreamLabels(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := newMetrics(reg)
	m.observe("PATCH", "", "v1", "nodes", "status", "resource", 200, 3*time.Millisecond)
	srv := httptest.NewServer(metricsHandler(reg))
	defer srv.Close()
	body := fetch(t, srv, http.MethodGet, "", "").body
	for _, want := range []string{
		`apiserver_request_total{code="200",component="apiserver",group="",resource="nodes",scope="resource",subresource="status",verb="PATCH",version="v1"}`,
		`apiserver_request_duration_seconds_bucket{component="apiserver",group="",resource="nodes",scope="resource",subresource="status",verb="PATCH",version="v1",le="0.005"} `,
		`apiserver_request_duration_seconds_bucket{component="apiserver",group="",resource="nodes",scope="resource",subresource="status",verb="PATCH",version="v1",le="60"} `,
		"go_goroutines ",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
