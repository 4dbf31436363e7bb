package garbagecollector

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"

	"minicp/internal/promreg"
)

// queueMetrics gives the collector's work queue kube-controller-manager's
// workqueue_* series (labelled name="garbage_collector_attempt_to_delete")
// on the stack's registry: how many objects wait to be looked at, how long
// they wait and how long each takes.
type queueMetrics struct {
	depth, unfinished, longest *prometheus.GaugeVec
	adds, retries              *prometheus.CounterVec
	latency, work              *prometheus.HistogramVec
}

var _ workqueue.MetricsProvider = (*queueMetrics)(nil)

func newQueueMetrics(reg prometheus.Registerer) *queueMetrics {
	const sub = "workqueue"
	gauge := func(name, help string) *prometheus.GaugeVec {
		return promreg.Register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: sub, Name: name, Help: help}, []string{"name"}))
	}
	counter := func(name, help string) *prometheus.CounterVec {
		return promreg.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: sub, Name: name, Help: help}, []string{"name"}))
	}
	histogram := func(name, help string) *prometheus.HistogramVec {
		return promreg.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: sub, Name: name, Help: help, Buckets: prometheus.ExponentialBuckets(10e-9, 10, 12),
		}, []string{"name"}))
	}
	return &queueMetrics{
		depth:      gauge("depth", "Current depth of workqueue"),
		unfinished: gauge("unfinished_work_seconds", "How many seconds of work has been done that is in progress and hasn't been observed by work_duration."),
		longest:    gauge("longest_running_processor_seconds", "How many seconds has the longest running processor for workqueue been running."),
		adds:       counter("adds_total", "Total number of adds handled by workqueue"),
		retries:    counter("retries_total", "Total number of retries handled by workqueue"),
		latency:    histogram("queue_duration_seconds", "How long in seconds an item stays in workqueue before being requested."),
		work:       histogram("work_duration_seconds", "How long in seconds processing an item from workqueue takes."),
	}
}

func (m *queueMetrics) NewDepthMetric(name string) workqueue.GaugeMetric {
	return m.depth.WithLabelValues(name)
}
func (m *queueMetrics) NewAddsMetric(name string) workqueue.CounterMetric {
	return m.adds.WithLabelValues(name)
}
func (m *queueMetrics) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return m.latency.WithLabelValues(name)
}
func (m *queueMetrics) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return m.work.WithLabelValues(name)
}
func (m *queueMetrics) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return m.unfinished.WithLabelValues(name)
}
func (m *queueMetrics) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return m.longest.WithLabelValues(name)
}
func (m *queueMetrics) NewRetriesMetric(name string) workqueue.CounterMetric {
	return m.retries.WithLabelValues(name)
}
