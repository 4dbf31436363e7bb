package ui

import (
	"cmp"
	"math"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
)

// The load panel (M9 and M15): requests per second
// by verb, so that a relist storm stands out, and the p99 of
// etcd_request_duration_seconds by operation, which tells "the apiserver
// is slow" from "etcd is slow". Both are rates, so they need two readings
// of the counters: the sampler keeps the readings of the last loadWindow,
// taken when the view is asked for (at most one per minSampleGap, shared
// by every client), and the view compares the newest with the oldest. No
// goroutine runs when nobody looks.

const (
	loadWindow   = 10 * time.Second
	minSampleGap = 900 * time.Millisecond

	requestsMetric  = "apiserver_request_total"
	watchListMetric = "apiserver_watch_list_duration_seconds"
	etcdMetric      = "etcd_request_duration_seconds"

	// watchListVerb is the panel's row for watch-list requests: WATCHes
	// that started by sending the whole current state, which is how
	// client-go's informers list since watch-list became their default
	// (v0.35). A relist storm of such informers shows here, not as LISTs.
	// The same requests are counted under WATCH too.
	watchListVerb = "WATCHLIST"
)

// LoadView is what GET /debug/load answers.
type LoadView struct {
	// WindowSeconds is the span the rates are computed over; 0 on the
	// first reading, when only totals are known.
	WindowSeconds float64 `json:"windowSeconds"`
	// Requests are the apiserver's resource requests by verb (LIST, GET,
	// WATCH, CREATE, ...): requests to /debug, /ui and /metrics, such as
	// this page's own, are not counted. WATCHLIST counts the watches that
	// delivered a whole initial state (informers listing in watch-list mode).
	Requests []VerbLoad `json:"requests"`
	// Etcd is the apiserver's etcd requests by operation.
	Etcd []EtcdLoad `json:"etcd"`
}

// VerbLoad is one verb's request rate and total since start.
type VerbLoad struct {
	Verb      string  `json:"verb"`
	PerSecond float64 `json:"perSecond"`
	Total     float64 `json:"total"`
}

// EtcdLoad is one etcd operation's rate and 99th percentile latency over
// the window (P99Seconds -1: no request in the window), estimated from
// the histogram buckets as Prometheus' histogram_quantile does.
type EtcdLoad struct {
	Operation  string  `json:"operation"`
	PerSecond  float64 `json:"perSecond"`
	P99Seconds float64 `json:"p99Seconds"`
}

// loadSample is one reading of the counters.
type loadSample struct {
	at       time.Time
	requests map[string]float64    // verb -> requests so far
	etcd     map[string]*histogram // operation -> latencies so far, over every type
}

// histogram is a cumulative histogram: counts[i] samples <= bounds[i].
type histogram struct {
	bounds []float64
	counts []float64
	total  float64
}

type loadSampler struct {
	gatherer prometheus.Gatherer
	clock    clock.PassiveClock

	// mu guards samples; it is held across Gather, so that pages asking
	// at the same moment share one reading.
	mu sync.Mutex
	// samples are oldest first: the newest reading and those back to the
	// last one taken before now-loadWindow.
	samples []loadSample
}

func newLoadSampler(g prometheus.Gatherer, c clock.PassiveClock) *loadSampler {
	return &loadSampler{gatherer: g, clock: c}
}

// view reads the counters if the last reading is old enough, and compares
// the newest reading with the oldest.
func (s *loadSampler) view() (LoadView, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	if len(s.samples) == 0 || now.Sub(s.samples[len(s.samples)-1].at) >= minSampleGap {
		sample, err := s.read(now)
		if err != nil {
			return LoadView{}, err
		}
		s.samples = append(s.samples, sample)
	}
	for len(s.samples) > 2 && !s.samples[1].at.After(now.Add(-loadWindow)) {
		s.samples = s.samples[1:]
	}
	return compare(s.samples[0], s.samples[len(s.samples)-1]), nil
}

// read gathers the two metrics into a sample.
func (s *loadSampler) read(now time.Time) (loadSample, error) {
	families, err := s.gatherer.Gather()
	if err != nil {
		return loadSample{}, err
	}
	sample := loadSample{at: now, requests: map[string]float64{}, etcd: map[string]*histogram{}}
	for _, mf := range families {
		switch mf.GetName() {
		case requestsMetric:
			for _, m := range mf.GetMetric() {
				if label(m, "resource") != "" {
					sample.requests[label(m, "verb")] += m.GetCounter().GetValue()
				}
			}
		case watchListMetric:
			for _, m := range mf.GetMetric() {
				sample.requests[watchListVerb] += float64(m.GetHistogram().GetSampleCount())
			}
		case etcdMetric:
			for _, m := range mf.GetMetric() {
				op := label(m, "operation")
				sample.etcd[op] = sample.etcd[op].add(m.GetHistogram())
			}
		}
	}
	return sample, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// add returns h plus the buckets of p (same bounds: one HistogramVec).
func (h *histogram) add(p *dto.Histogram) *histogram {
	if h == nil {
		h = &histogram{}
		for _, b := range p.GetBucket() {
			h.bounds = append(h.bounds, b.GetUpperBound())
		}
		h.counts = make([]float64, len(h.bounds))
	}
	for i, b := range p.GetBucket() {
		if i < len(h.counts) {
			h.counts[i] += float64(b.GetCumulativeCount())
		}
	}
	h.total += float64(p.GetSampleCount())
	return h
}

// compare turns two readings into rates and windowed percentiles.
func compare(old, cur loadSample) LoadView {
	span := cur.at.Sub(old.at).Seconds()
	view := LoadView{WindowSeconds: span, Requests: []VerbLoad{}, Etcd: []EtcdLoad{}}
	for verb, total := range cur.requests {
		view.Requests = append(view.Requests, VerbLoad{Verb: verb, Total: total, PerSecond: rate(total-old.requests[verb], span)})
	}
	for op, h := range cur.etcd {
		delta := h.minus(old.etcd[op])
		view.Etcd = append(view.Etcd, EtcdLoad{Operation: op, PerSecond: rate(delta.total, span), P99Seconds: delta.quantile(0.99)})
	}
	slices.SortFunc(view.Requests, func(a, b VerbLoad) int { return cmp.Compare(a.Verb, b.Verb) })
	slices.SortFunc(view.Etcd, func(a, b EtcdLoad) int { return cmp.Compare(a.Operation, b.Operation) })
	return view
}

func rate(delta, span float64) float64 {
	if span <= 0 {
		return 0
	}
	return delta / span
}

// minus returns the samples of h not yet in old (nil old: all of them).
func (h *histogram) minus(old *histogram) *histogram {
	d := &histogram{bounds: h.bounds, counts: slices.Clone(h.counts), total: h.total}
	if old == nil || len(old.counts) != len(h.counts) {
		return d
	}
	for i := range d.counts {
		d.counts[i] -= old.counts[i]
	}
	d.total -= old.total
	return d
}

// quantile estimates the q-quantile as histogram_quantile does: find the
// bucket holding the q x total-th sample and interpolate linearly inside
// it. -1 when the histogram is empty.
func (h *histogram) quantile(q float64) float64 {
	if h.total <= 0 {
		return -1
	}
	rank := q * h.total
	lower, below := 0.0, 0.0
	for i, upper := range h.bounds {
		if h.counts[i] >= rank {
			if math.IsInf(upper, 1) || h.counts[i] == below {
				return lower
			}
			return lower + (upper-lower)*(rank-below)/(h.counts[i]-below)
		}
		lower, below = upper, h.counts[i]
	}
	return lower // past the last finite bound: as high as can be told
}

func (v *Views) serveLoad(w http.ResponseWriter, _ *http.Request) {
	view, err := v.load.view()
	if err != nil {
		writeStatus(w, apierrors.NewInternalError(err))
		return
	}
	writeJSON(w, view)
}
