package ui

import (
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clocktesting "k8s.io/utils/clock/testing"
)

// M9, M15: rates by verb and etcd's p99 by
// operation come from two readings of the counters, over the window
// between them; the page's own requests (no resource) are not counted.
func TestLoadViewComputesRatesAndP99OverTheWindow(t *testing.T) {
	reg := prometheus.NewRegistry()
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{Name: requestsMetric}, []string{"verb", "resource"})
	etcd := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: etcdMetric, Buckets: []float64{0.005, 0.025, 0.05, 0.1}}, []string{"operation", "type"})
	reg.MustRegister(requests, etcd)
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	s := newLoadSampler(reg, clk)

	requests.WithLabelValues("LIST", "pods").Add(5)
	requests.WithLabelValues("GET", "").Add(100) // /debug, /ui, /metrics
	etcd.WithLabelValues("list", "pods").Observe(0.2)
	first, err := s.view()
	if err != nil {
		t.Fatal(err)
	}
	if first.WindowSeconds != 0 || len(first.Requests) != 1 || first.Requests[0].Total != 5 || first.Requests[0].PerSecond != 0 {
		t.Fatalf("first reading: got %+v, want totals only: LIST 5 and no rate", first)
	}

	// A relist storm: 40 LISTs in 2 s, the list latency in the 25-50 ms bucket.
	requests.WithLabelValues("LIST", "pods").Add(40)
	for range 100 {
		etcd.WithLabelValues("list", "pods").Observe(0.03)
	}
	clk.SetTime(clk.Now().Add(2 * time.Second))
	v, err := s.view()
	if err != nil {
		t.Fatal(err)
	}
	if v.WindowSeconds != 2 || v.Requests[0].Verb != "LIST" || v.Requests[0].PerSecond != 20 {
		t.Errorf("got %+v, want LIST at 20/s over 2 s", v)
	}
	// rank 99 of 100 in (0.025, 0.05]: 0.025 + 0.025 x 99/100.
	if len(v.Etcd) != 1 || v.Etcd[0].PerSecond != 50 || math.Abs(v.Etcd[0].P99Seconds-0.04975) > 1e-9 {
		t.Errorf("etcd: got %+v, want list at 50/s with p99 0.04975 s (the 0.2 s sample is before the window)", v.Etcd)
	}

	// Informers in watch-list mode relist with WATCHes that send the whole
	// state first: the WATCHLIST row counts them.
	watchLists := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: watchListMetric}, []string{"group", "version", "resource", "scope"})
	reg.MustRegister(watchLists)
	for range 6 {
		watchLists.WithLabelValues("", "v1", "pods", "namespace").Observe(0.1)
	}
	clk.SetTime(clk.Now().Add(time.Second))
	v, err = s.view()
	if err != nil {
		t.Fatal(err)
	}
	if got := verbLoad(v, watchListVerb); got == nil || got.Total != 6 {
		t.Errorf("got %+v, want a WATCHLIST row with 6 requests", v.Requests)
	}

	// Asked again at once: the same reading, shared.
	again, err := s.view()
	if err != nil {
		t.Fatal(err)
	}
	if again.WindowSeconds != 3 {
		t.Errorf("asked again within %s: window %v s, want the same 3 s", minSampleGap, again.WindowSeconds)
	}
	// Readings older than the window are dropped: the rate is over ~10 s.
	for range 15 {
		clk.SetTime(clk.Now().Add(time.Second))
		if _, err := s.view(); err != nil {
			t.Fatal(err)
		}
	}
	v, err = s.view()
	if err != nil {
		t.Fatal(err)
	}
	if v.WindowSeconds != loadWindow.Seconds() || v.Requests[0].PerSecond != 0 || v.Etcd[0].P99Seconds != -1 {
		t.Errorf("after a quiet %v: got %+v, want no requests over a %v window and no p99", loadWindow, v, loadWindow)
	}
}

// verbLoad finds a verb's row.
func verbLoad(v LoadView, verb string) *VerbLoad {
	for i := range v.Requests {
		if v.Requests[i].Verb == verb {
			return &v.Requests[i]
		}
	}
	return nil
}

func TestQuantileFollowsHistogramQuantile(t *testing.T) {
	h := &histogram{bounds: []float64{1, 2, 4}, counts: []float64{10, 10, 20}, total: 30}
	for _, c := range []struct {
		name string
		q    float64
		want float64
	}{
		{"inside the first bucket, from 0", 0.15, 0.45},
		{"inside a later bucket", 0.5, 2 + 2*(15-10)/10.0},
		{"past the last finite bound", 0.99, 4},
	} {
		if got := h.quantile(c.q); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: quantile(%v) = %v, want %v", c.name, c.q, got, c.want)
		}
	}
	if got := (&histogram{}).quantile(0.99); got != -1 {
		t.Errorf("empty: got %v, want -1", got)
	}
}
