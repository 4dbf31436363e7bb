package apiserver

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"minicp/apiserver/admission"
	"minicp/internal/promreg"
)

// Request metrics carry upstream's names, labels and buckets, so the
// queries and dashboards written for kube-apiserver work here unchanged. In
// the triage labs (M15) they answer "is the apiserver slow, or
// etcd?" next to etcd's own metrics, which live in the same registry and
// come out of the same /metrics page.

// requestComponent is the component label value upstream uses for requests
// served by the apiserver itself.
const requestComponent = "apiserver"

// requestDurationBuckets are upstream's apiserver_request_duration_seconds
// buckets, in seconds.
var requestDurationBuckets = []float64{
	0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60,
}

// responseSizeBuckets are upstream's apiserver_response_sizes buckets:
// 1 kB to 10 GB by factors of ten.
var responseSizeBuckets = prometheus.ExponentialBuckets(1000, 10, 8)

// watchEventSizeBuckets are upstream's apiserver_watch_events_sizes
// buckets: 1 KiB to 128 KiB by factors of two.
var watchEventSizeBuckets = prometheus.ExponentialBuckets(1024, 2, 8)

// watchListDurationBuckets are upstream's
// apiserver_watch_list_duration_seconds buckets, in seconds.
var watchListDurationBuckets = []float64{0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 15.0, 20.0, 30.0, 45.0, 60.0}

// metrics records one count and one latency sample per finished request.
// Its collectors live in the registry of the server's stack
// (Config.Metrics): two stacks in one process share no series.
//
// What a relist costs (M6) shows in the others: a LIST's
// bytes in apiserver_response_sizes, a streaming relist (watch-list, the
// informers' default) in apiserver_watch_list_duration_seconds (one sample
// per initial state delivered) and its bytes in apiserver_watch_events_sizes.
type metrics struct {
	requests      *prometheus.CounterVec   // apiserver_request_total
	duration      *prometheus.HistogramVec // apiserver_request_duration_seconds
	responseSizes *prometheus.HistogramVec // apiserver_response_sizes
	watchEvents   *prometheus.CounterVec   // apiserver_watch_events_total
	watchSizes    *prometheus.HistogramVec // apiserver_watch_events_sizes
	watchList     *prometheus.HistogramVec // apiserver_watch_list_duration_seconds
	admission     admission.Metrics
}

// newMetrics registers the request metrics with reg, or reuses them if an
// earlier call already registered them there.
func newMetrics(reg prometheus.Registerer) *metrics {
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_request_total",
		Help: "Counter of apiserver requests broken out for each verb, group, version, resource, scope, component, and HTTP response code.",
	}, []string{"verb", "group", "version", "resource", "subresource", "scope", "component", "code"})
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_request_duration_seconds",
		Help:    "Response latency distribution in seconds for each verb, group, version, resource, subresource, scope and component.",
		Buckets: requestDurationBuckets,
	}, []string{"verb", "group", "version", "resource", "subresource", "scope", "component"})
	responseSizes := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_response_sizes",
		Help:    "Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.",
		Buckets: responseSizeBuckets,
	}, []string{"verb", "group", "version", "resource", "subresource", "scope", "component"})
	watchEvents := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_watch_events_total",
		Help: "Number of events sent in watch clients",
	}, []string{"group", "version", "resource"})
	watchSizes := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_watch_events_sizes",
		Help:    "Watch event size distribution in bytes",
		Buckets: watchEventSizeBuckets,
	}, []string{"group", "version", "resource"})
	watchList := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_watch_list_duration_seconds",
		Help:    "Response latency distribution in seconds for watch list requests broken by group, version, resource and scope.",
		Buckets: watchListDurationBuckets,
	}, []string{"group", "version", "resource", "scope"})
	return &metrics{
		requests:      promreg.Register(reg, requests),
		duration:      promreg.Register(reg, duration),
		responseSizes: promreg.Register(reg, responseSizes),
		watchEvents:   promreg.Register(reg, watchEvents),
		watchSizes:    promreg.Register(reg, watchSizes),
		watchList:     promreg.Register(reg, watchList),
		admission:     admission.NewMetrics(reg),
	}
}

// observe records one finished request. verb is upstream's request verb in
// upper case (GET, LIST, WATCH, POST, PUT, PATCH, DELETE,
// DELETECOLLECTION); scope is "resource" for a named object, "namespace"
// or "cluster" for collections, "" for non-resource paths. WATCH durations
// are how long the watch stayed open.
func (m *metrics) observe(verb, group, version, resource, subresource, scope string, code int, elapsed time.Duration) {
	verb = strings.ToUpper(verb)
	m.requests.WithLabelValues(verb, group, version, resource, subresource, scope, requestComponent, strconv.Itoa(code)).Inc()
	m.duration.WithLabelValues(verb, group, version, resource, subresource, scope, requestComponent).Observe(elapsed.Seconds())
}

// observeResponseSize records the bytes of one finished response, as
// upstream does for every verb but WATCH and CONNECT (a watch's bytes are
// counted per event by observeWatchEvent).
func (m *metrics) observeResponseSize(verb, group, version, resource, subresource, scope string, size int64) {
	verb = strings.ToUpper(verb)
	if verb == "WATCH" || verb == "CONNECT" {
		return
	}
	m.responseSizes.WithLabelValues(verb, group, version, resource, subresource, scope, requestComponent).Observe(float64(size))
}

// observeWatchEvent records one event sent on a watch stream and its
// framed size in bytes.
func (m *metrics) observeWatchEvent(group, version, resource string, size int) {
	m.watchEvents.WithLabelValues(group, version, resource).Inc()
	m.watchSizes.WithLabelValues(group, version, resource).Observe(float64(size))
}

// observeWatchList records a watch-list request that has delivered its
// initial state (the initial-events-end bookmark is sent), elapsed after
// the request arrived.
func (m *metrics) observeWatchList(group, version, resource, scope string, elapsed time.Duration) {
	m.watchList.WithLabelValues(group, version, resource, scope).Observe(elapsed.Seconds())
}

// metricsHandler serves /metrics: the stack's registry (these request
// metrics, the storage's and the watch cache's) and Prometheus' default
// registry, which holds what is the process's rather than one stack's: the
// Go runtime and process collectors, and the metrics an embedded etcd
// registers there itself (etcd_server_*, etcd_disk_*, etcd_debugging_*).
func metricsHandler(stack prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(prometheus.Gatherers{stack, prometheus.DefaultGatherer}, promhttp.HandlerOpts{})
}
