package watchcache

import (
	"errors"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"minicp/registry"
)

// Metrics carry upstream's names and labels (k8s.io/apiserver's cacher
// metrics, and apiserver_registered_watchers from its endpoints), so that
// kube-apiserver dashboards read minicp unchanged. They live in Prometheus'
// default registry, which the apiserver serves on /metrics next to etcd's
// own (etcd_debugging_mvcc_watcher_total counts etcd's watchers: compare it
// with apiserver_registered_watchers). Several caches in one process (tests
// start many stacks) share the same series.
var (
	eventsReceived = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_watch_cache_events_received_total",
		Help: "Counter of events received in watch cache broken by resource type.",
	}, []string{"group", "resource"})
	eventsDispatched = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_watch_cache_events_dispatched_total",
		Help: "Counter of events dispatched in watch cache broken by resource type.",
	}, []string{"group", "resource"})
	readWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_watch_cache_read_wait_seconds",
		Help:    "Histogram of time spent waiting for a watch cache to become fresh.",
		Buckets: []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3},
	}, []string{"group", "resource"})
	listTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_cache_list_total",
		Help: "Number of LIST requests served from watch cache",
	}, []string{"group", "resource", "index"})
	listFetched = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_cache_list_fetched_objects_total",
		Help: "Number of objects read from watch cache in the course of serving a LIST request",
	}, []string{"group", "resource", "index"})
	listReturned = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_cache_list_returned_objects_total",
		Help: "Number of objects returned for a LIST request from watch cache",
	}, []string{"group", "resource"})
	initializations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_watch_cache_initializations_total",
		Help: "Counter of watch cache initializations broken by resource type.",
	}, []string{"group", "resource"})
	resourceVersionGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_watch_cache_resource_version",
		Help: "Current resource version of watch cache broken by resource type.",
	}, []string{"group", "resource"})
	capacityGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "watch_cache_capacity",
		Help: "Total capacity of watch cache broken by resource type.",
	}, []string{"group", "resource"})
	terminatedWatchers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_terminated_watchers_total",
		Help: "Counter of watchers closed due to unresponsiveness broken by resource type.",
	}, []string{"group", "resource"})
	consistentReads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_watch_cache_consistent_read_total",
		Help: "Counter for consistent reads from cache.",
	}, []string{"group", "resource", "success", "fallback"})
	registeredWatchers = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_registered_watchers",
		Help: "Number of currently registered watchers for a given resources",
	}, []string{"group", "version", "kind"})
)

var registerMetrics sync.Once

// resourceMetrics are the series of one resource.
type resourceMetrics struct {
	eventsReceived, eventsDispatched prometheus.Counter
	readWait                         prometheus.Observer
	initializations                  prometheus.Counter
	resourceVersion, capacity        prometheus.Gauge
	terminated                       prometheus.Counter
	watchers                         prometheus.Gauge
	group, resource                  string
}

func newResourceMetrics(res *registry.Resource, capacity int) *resourceMetrics {
	registerMetrics.Do(func() {
		for _, c := range []prometheus.Collector{eventsReceived, eventsDispatched, readWait, listTotal, listFetched,
			listReturned, initializations, resourceVersionGauge, capacityGauge, terminatedWatchers, consistentReads, registeredWatchers} {
			mustRegister(c)
		}
	})
	g, r := res.GroupVersion.Group, res.Name
	m := &resourceMetrics{
		eventsReceived:   eventsReceived.WithLabelValues(g, r),
		eventsDispatched: eventsDispatched.WithLabelValues(g, r),
		readWait:         readWait.WithLabelValues(g, r),
		initializations:  initializations.WithLabelValues(g, r),
		resourceVersion:  resourceVersionGauge.WithLabelValues(g, r),
		capacity:         capacityGauge.WithLabelValues(g, r),
		terminated:       terminatedWatchers.WithLabelValues(g, r),
		watchers:         registeredWatchers.WithLabelValues(g, res.GroupVersion.Version, res.Kind),
		group:            g,
		resource:         r,
	}
	m.capacity.Set(float64(capacity))
	return m
}

// list records a LIST served from the cache: index is "" for a scan,
// else the field the index is on.
func (m *resourceMetrics) list(index string, fetched, returned int) {
	listTotal.WithLabelValues(m.group, m.resource, index).Inc()
	listFetched.WithLabelValues(m.group, m.resource, index).Add(float64(fetched))
	listReturned.WithLabelValues(m.group, m.resource).Add(float64(returned))
}

// consistentRead records a consistent LIST: served from the cache, or sent
// to etcd because the cache did not catch up in time.
func (m *resourceMetrics) consistentRead(fallback bool) {
	consistentReads.WithLabelValues(m.group, m.resource, "true", strconv.FormatBool(fallback)).Inc()
}

// mustRegister registers c with the default registry. A collector of the
// same name registered before (by another package with identical metrics)
// is an error only if it differs.
func mustRegister(c prometheus.Collector) {
	err := prometheus.DefaultRegisterer.Register(c)
	var already prometheus.AlreadyRegisteredError
	if err != nil && !errors.As(err, &already) {
		panic(err)
	}
}
