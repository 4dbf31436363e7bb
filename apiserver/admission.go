package apiserver

// Admission: after a request is decoded and before storage acts on it, an
// ordered chain of plugins may reject it (or, upstream, change it). The triage
// drill (M15, docs/MECHANISMS.md) names a long admission chain as one of the
// apiserver-side answers to "why 504?": time spent here is neither etcd's
// nor the cache's, and shows up in the admission phase of the request's
// trace and in apiserver_admission_controller_admission_duration_seconds.
//
// minicp runs the chain for CREATE, UPDATE (also PATCH and the status and
// finalize subresources) and DELETE. For updates it runs inside the
// store's read-modify-write loop, as upstream does, so a plugin sees the
// object being replaced and an update that creates (PUT of a missing
// event or lease) is admitted as a CREATE.

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"minicp/internal/promreg"
	"minicp/registry"
	"minicp/reqtrace"
)

// AdmissionOperation is what a request does to an object.
type AdmissionOperation string

// The operations admission sees, named as upstream's.
const (
	AdmissionCreate AdmissionOperation = "CREATE"
	AdmissionUpdate AdmissionOperation = "UPDATE"
	AdmissionDelete AdmissionOperation = "DELETE"
)

// AdmissionAttributes describe the request being admitted.
type AdmissionAttributes struct {
	Operation   AdmissionOperation
	Resource    *registry.Resource
	Subresource string // "", "status" or "finalize"
	Namespace   string // "" for cluster-scoped resources
	// Name is the object's name; for a create with generateName, the
	// prefix it will be generated from.
	Name string
	// Object is the object to be stored (CREATE, UPDATE); nil for DELETE.
	Object runtime.Object
	// OldObject is the stored object an UPDATE replaces; nil otherwise.
	OldObject runtime.Object
	DryRun    bool
}

// AdmissionPlugin is one step of the admission chain. Admit returns nil
// to let the request go on, or the error to answer it with (an API
// status error; anything else becomes 500 InternalError). It may block,
// and must then honour ctx: the request's deadline is in it.
type AdmissionPlugin interface {
	Name() string
	Admit(ctx context.Context, a *AdmissionAttributes) error
}

// admissionChain runs plugins in order; the first rejection ends it.
type admissionChain []AdmissionPlugin

// admit runs the chain for a, timing each plugin into upstream's admission
// metrics and the whole chain into the request's admission phase.
func (chain admissionChain) admit(ctx context.Context, metrics admissionMetricsT, a *AdmissionAttributes) error {
	if len(chain) == 0 {
		return nil
	}
	defer reqtrace.From(ctx).Begin(reqtrace.Admission)()
	chainStart := time.Now()
	var err error
	for _, p := range chain {
		start := time.Now()
		err = p.Admit(ctx, a)
		metrics.observePlugin(p.Name(), a.Operation, err != nil, time.Since(start))
		if err != nil {
			break
		}
	}
	metrics.observeStep(a.Operation, err != nil, time.Since(chainStart))
	return err
}

// newAdmission describes a request on obj (and old, the stored object, for
// updates) for the chain.
func newAdmission(op AdmissionOperation, info *requestInfo, res *registry.Resource, obj, old runtime.Object, dryRun bool) *AdmissionAttributes {
	a := &AdmissionAttributes{
		Operation: op, Resource: res, Subresource: info.subresource, Namespace: info.namespace,
		Name: info.name, Object: obj, OldObject: old, DryRun: dryRun,
	}
	if m, err := meta.Accessor(obj); err == nil && obj != nil {
		if a.Name == "" {
			a.Name = m.GetName()
		}
		if a.Name == "" {
			a.Name = m.GetGenerateName()
		}
		if a.Namespace == "" && res.Namespaced {
			a.Namespace = m.GetNamespace()
		}
	}
	return a
}

// admissionBuckets are upstream's buckets for the admission histograms.
var admissionBuckets = []float64{0.005, 0.025, 0.1, 0.5, 1.0, 2.5}

// admissionMetrics carry upstream's names and labels. minicp's plugins
// all run in upstream's first (mutating, "admit") phase.
type admissionMetricsT struct {
	plugin *prometheus.HistogramVec // apiserver_admission_controller_admission_duration_seconds
	step   *prometheus.HistogramVec // apiserver_admission_step_admission_duration_seconds
}

// newAdmissionMetrics registers the admission metrics with reg.
func newAdmissionMetrics(reg prometheus.Registerer) admissionMetricsT {
	return admissionMetricsT{
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

func (m admissionMetricsT) observePlugin(name string, op AdmissionOperation, rejected bool, d time.Duration) {
	m.plugin.WithLabelValues(name, string(op), strconv.FormatBool(rejected), "admit").Observe(d.Seconds())
}

func (m admissionMetricsT) observeStep(op AdmissionOperation, rejected bool, d time.Duration) {
	m.step.WithLabelValues(string(op), strconv.FormatBool(rejected), "admit").Observe(d.Seconds())
}
