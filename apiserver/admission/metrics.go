package admission

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"minicp/internal/promreg"
)

// admissionBuckets are upstream's buckets for the admission histograms.
var admissionBuckets = []float64{0.005, 0.025, 0.1, 0.5, 1.0, 2.5}

// Metrics carry upstream's names and labels. minicp's plugins
// all run in upstream's first (mutating, "admit") phase.
type Metrics struct {
	plugin *prometheus.HistogramVec // apiserver_admission_controller_admission_duration_seconds
	step   *prometheus.HistogramVec // apiserver_admission_step_admission_duration_seconds
}

// NewMetrics registers the admission metrics with reg.
func NewMetrics(reg prometheus.Registerer) Metrics {
	return Metrics{
		plugin: promreg.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_admission_controller_admission_duration_seconds",
			Help:    "Admission controller latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
			Buckets: admissionBuckets,
		}, []string{"name", "operation", "rejected", "type"})),
		step: promreg.Register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_admission_step_admission_duration_seconds",
			Help:    "Admission sub-step latency histogram in seconds, broken out for each operation and API resource and step type (validate or admit).",
			Buckets: admissionBuckets,
		}, []string{"operation", "rejected", "type"})),
	}
}

func (m Metrics) observePlugin(name string, op Operation, rejected bool, d time.Duration) {
	m.plugin.WithLabelValues(name, string(op), strconv.FormatBool(rejected), "admit").Observe(d.Seconds())
}

func (m Metrics) observeStep(op Operation, rejected bool, d time.Duration) {
	m.step.WithLabelValues(string(op), strconv.FormatBool(rejected), "admit").Observe(d.Seconds())
}
