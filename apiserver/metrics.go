package apiserver

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Request metrics carry upstream's names, labels and buckets, so the
// queries and dashboards written for kube-apiserver work here unchanged. In
// the triage labs (seed section 5) they answer "is the apiserver slow, or
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

// metrics records one count and one latency sample per finished request.
// Its collectors live in Prometheus' default registry and are shared by
// every metrics value in the process: tests run several servers at once,
// and they all add to the same series, as several handlers of one
// kube-apiserver would.
type metrics struct {
	requests *prometheus.CounterVec   // apiserver_request_total
	duration *prometheus.HistogramVec // apiserver_request_duration_seconds
}

// newMetrics registers the request metrics with the default registry, or
// reuses them if an earlier call already did.
func newMetrics() *metrics {
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_request_total",
		Help: "Counter of apiserver requests broken out for each verb, group, version, resource, scope, component, and HTTP response code.",
	}, []string{"verb", "group", "version", "resource", "subresource", "scope", "component", "code"})
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_request_duration_seconds",
		Help:    "Response latency distribution in seconds for each verb, group, version, resource, subresource, scope and component.",
		Buckets: requestDurationBuckets,
	}, []string{"verb", "group", "version", "resource", "subresource", "scope", "component"})
	return &metrics{
		requests: registerOnce(requests),
		duration: registerOnce(duration),
	}
}

// registerOnce registers c with the default registry and returns it, or
// returns the identical collector registered before.
func registerOnce[C prometheus.Collector](c C) C {
	err := prometheus.DefaultRegisterer.Register(c)
	if err == nil {
		return c
	}
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		if existing, ok := already.ExistingCollector.(C); ok {
			return existing
		}
	}
	// Only a different metric with the same name can get here: a bug in
	// this package, not a condition to handle at run time.
	panic(err)
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

// handler serves /metrics: everything in the default registry, which holds
// these request metrics, etcd's server metrics when etcd is embedded, and
// the Go runtime and process collectors.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(prometheus.DefaultGatherer, promhttp.HandlerOpts{})
}
