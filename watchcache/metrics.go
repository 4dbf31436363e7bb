package watchcache

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"minicp/internal/promreg"
	"minicp/registry"
)

// Metrics carry upstream's names and labels (k8s.io/apiserver's cacher
// metrics, and apiserver_registered_watchers from its endpoints), so that
// kube-apiserver dashboards read minicp unchanged. They are registered with
// the registry of the cache's stack (Config.Metrics), which the apiserver
// serves on /metrics next to etcd's own (etcd_debugging_mvcc_watcher_total
// counts etcd's watchers: compare it with apiserver_registered_watchers).
// /debug/watchcache reads the same counters: two stacks in one process
// share no series, so no second set of counters is needed.
type cacheMetrics struct {
	eventsReceived, eventsDispatched *prometheus.CounterVec // {group,resource}
	readWait                         *prometheus.HistogramVec
	listTotal, listFetched           *prometheus.CounterVec // {group,resource,index}
	listReturned                     *prometheus.CounterVec
	initializations                  *prometheus.CounterVec
	resourceVersion, capacity        *prometheus.GaugeVec
	terminated                       *prometheus.CounterVec
	consistentReads                  *prometheus.CounterVec // {group,resource,success,fallback}
	registeredWatchers               *prometheus.GaugeVec   // {group,version,kind}
}

// newCacheMetrics registers the cache's metrics with reg (nil: nowhere).
func newCacheMetrics(reg prometheus.Registerer) *cacheMetrics {
	gr := []string{"group", "resource"}
	counter := func(name, help string, labels []string) *prometheus.CounterVec {
		return promreg.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels))
	}
	gauge := func(name, help string, labels []string) *prometheus.GaugeVec {
		return promreg.Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels))
	}
	return &cacheMetrics{
		eventsReceived:   counter("apiserver_watch_cache_events_received_total", "Counter of events received in watch cache broken by resource type.", gr),
		eventsDispatched: counter("apiserver_watch_cache_events_dispatched_total", "Counter of events dispatched in watch cache broken by resource type.", gr),
		readWait: promreg.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_watch_cache_read_wait_seconds",
			Help:    "Histogram of time spent waiting for a watch cache to become fresh.",
			Buckets: []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3},
		}, gr)),
		listTotal:          counter("apiserver_cache_list_total", "Number of LIST requests served from watch cache", []string{"group", "resource", "index"}),
		listFetched:        counter("apiserver_cache_list_fetched_objects_total", "Number of objects read from watch cache in the course of serving a LIST request", []string{"group", "resource", "index"}),
		listReturned:       counter("apiserver_cache_list_returned_objects_total", "Number of objects returned for a LIST request from watch cache", gr),
		initializations:    counter("apiserver_watch_cache_initializations_total", "Counter of watch cache initializations broken by resource type.", gr),
		resourceVersion:    gauge("apiserver_watch_cache_resource_version", "Current resource version of watch cache broken by resource type.", gr),
		capacity:           gauge("watch_cache_capacity", "Total capacity of watch cache broken by resource type.", gr),
		terminated:         counter("apiserver_terminated_watchers_total", "Counter of watchers closed due to unresponsiveness broken by resource type.", gr),
		consistentReads:    counter("apiserver_watch_cache_consistent_read_total", "Counter for consistent reads from cache.", []string{"group", "resource", "success", "fallback"}),
		registeredWatchers: gauge("apiserver_registered_watchers", "Number of currently registered watchers for a given resources", []string{"group", "version", "kind"}),
	}
}

// resourceMetrics are the series of one resource, resolved once so that
// the hot paths do not look labels up.
type resourceMetrics struct {
	eventsReceived, eventsDispatched prometheus.Counter
	readWait                         prometheus.Observer
	initializations                  prometheus.Counter
	resourceVersion, capacity        prometheus.Gauge
	terminated                       prometheus.Counter
	watchers                         prometheus.Gauge
	// lists, fetched: per index label ("" for a scan, else the field).
	lists, fetched                          map[string]prometheus.Counter
	returned                                prometheus.Counter
	consistentFromCache, consistentFromEtcd prometheus.Counter
}

func (m *cacheMetrics) forResource(res *registry.Resource, capacity int) *resourceMetrics {
	g, r := res.GroupVersion.Group, res.Name
	rm := &resourceMetrics{
		eventsReceived:      m.eventsReceived.WithLabelValues(g, r),
		eventsDispatched:    m.eventsDispatched.WithLabelValues(g, r),
		readWait:            m.readWait.WithLabelValues(g, r),
		initializations:     m.initializations.WithLabelValues(g, r),
		resourceVersion:     m.resourceVersion.WithLabelValues(g, r),
		capacity:            m.capacity.WithLabelValues(g, r),
		terminated:          m.terminated.WithLabelValues(g, r),
		watchers:            m.registeredWatchers.WithLabelValues(g, res.GroupVersion.Version, res.Kind),
		lists:               map[string]prometheus.Counter{},
		fetched:             map[string]prometheus.Counter{},
		returned:            m.listReturned.WithLabelValues(g, r),
		consistentFromCache: m.consistentReads.WithLabelValues(g, r, "true", "false"),
		consistentFromEtcd:  m.consistentReads.WithLabelValues(g, r, "true", "true"),
	}
	indexes := []string{""}
	for _, ix := range res.Indexes {
		indexes = append(indexes, ix.Field)
	}
	for _, index := range indexes {
		rm.lists[index] = m.listTotal.WithLabelValues(g, r, index)
		rm.fetched[index] = m.listFetched.WithLabelValues(g, r, index)
	}
	rm.capacity.Set(float64(capacity))
	return rm
}

// list records a LIST served from the cache: index is "" for a scan,
// else the field the index is on.
func (m *resourceMetrics) list(index string, fetched, returned int) {
	m.lists[index].Inc()
	m.fetched[index].Add(float64(fetched))
	m.returned.Add(float64(returned))
}

// consistentRead records a consistent LIST: served from the cache, or sent
// to etcd because the cache did not catch up in time.
func (m *resourceMetrics) consistentRead(fallback bool) {
	if fallback {
		m.consistentFromEtcd.Inc()
	} else {
		m.consistentFromCache.Inc()
	}
}

// value reads a counter's (or gauge's) current value, for /debug/watchcache.
func value(c prometheus.Metric) int64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return 0
	}
	if m.Counter != nil {
		return int64(m.Counter.GetValue())
	}
	return int64(m.GetGauge().GetValue())
}

// listsServed is how many LISTs the cache answered, scans and index reads.
func (m *resourceMetrics) listsServed() int64 {
	var n int64
	for _, c := range m.lists {
		n += value(c)
	}
	return n
}
