package registry

// Storage metrics under upstream's names and labels, so that the
// triage question (M15: "is the etcd request slow in the apiserver's
// metrics?") is answered on minicp by the same query as on a real cluster:
//
//	histogram_quantile(0.99, rate(etcd_request_duration_seconds_bucket[1m]))
//
// etcd_request_duration_seconds is measured on the apiserver's side of every
// etcd request (etcdclient.go), so it includes the network and etcd's own
// queueing; etcd's server-side view (etcd_disk_wal_fsync_duration_seconds,
// etcd_server_*) comes out of the same /metrics page when etcd is embedded.
// The series are the Store's stack's (Options.Metrics), not the process's.

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"

	"minicp/internal/promreg"
)

// etcdRequestBuckets are upstream's etcd_request_duration_seconds buckets.
var etcdRequestBuckets = []float64{
	0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60,
}

// storageMetrics are one Store's, registered with its stack's registry
// (Options.Metrics).
type storageMetrics struct {
	duration *prometheus.HistogramVec // etcd_request_duration_seconds{operation,type}
	total    *prometheus.CounterVec   // etcd_requests_total{operation,type}
	errors   *prometheus.CounterVec   // etcd_request_errors_total{operation,type}
	objects  *prometheus.GaugeVec     // apiserver_storage_objects{resource}
}

// newStorageMetrics registers the storage metrics with reg (nil: nowhere).
func newStorageMetrics(reg prometheus.Registerer) *storageMetrics {
	return &storageMetrics{
		duration: promreg.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "etcd_request_duration_seconds",
			Help:    "Etcd request latency in seconds for each operation and object type.",
			Buckets: etcdRequestBuckets,
		}, []string{"operation", "type"})),
		total: promreg.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "etcd_requests_total",
			Help: "Etcd request counts for each operation and object type.",
		}, []string{"operation", "type"})),
		errors: promreg.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "etcd_request_errors_total",
			Help: "Etcd failed request counts for each operation and object type.",
		}, []string{"operation", "type"})),
		objects: promreg.Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_storage_objects",
			Help: "Number of stored objects at the time of last check split by kind.",
		}, []string{"resource"})),
	}
}

// record records one finished etcd request.
func (m *storageMetrics) record(operation, typ string, err error, start time.Time) {
	m.duration.WithLabelValues(operation, typ).Observe(time.Since(start).Seconds())
	m.total.WithLabelValues(operation, typ).Inc()
	if err != nil {
		m.errors.WithLabelValues(operation, typ).Inc()
	}
}

// DefaultObjectCountPeriod is upstream's --etcd-count-metric-poll-period.
const DefaultObjectCountPeriod = time.Minute

// CountObjects sets apiserver_storage_objects{resource} for every resource
// in the table, with one count-only range request per resource (recorded
// as operation "listWithCount", as upstream does).
func (s *Store) CountObjects(ctx context.Context) error {
	var errs []error
	for _, res := range s.resources.All() {
		resp, err := s.client.Get(ctx, keyPrefixFor(res, ""), clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			errs = append(errs, storageError(err))
			continue
		}
		s.metrics.objects.WithLabelValues(qualifiedResource(res).String()).Set(float64(resp.Count))
	}
	return errors.Join(errs...)
}

// RunObjectCounter calls CountObjects now and then every period until ctx
// ends. A failed count is logged and the gauge keeps its last value.
func (s *Store) RunObjectCounter(ctx context.Context, period time.Duration) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		if err := s.CountObjects(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("counting stored objects for apiserver_storage_objects failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// resourceOfKey names the resource an etcd key belongs to as the `type`
// label and the fault hook see it ("pods", "leases.coordination.k8s.io"),
// or "" for keys outside the resource table.
func (b *etcdBackends) resourceOfKey(key []byte) string {
	if res := b.resources.ForKey(string(key)); res != nil {
		return res.GroupResource().String()
	}
	return ""
}
