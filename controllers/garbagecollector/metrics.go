package garbagecollector

import (
	"github.com/prometheus/client_golang/prometheus"

	"minicp/internal/promreg"
)

// metrics are the collector's series on its stack's registry. The first is
// kube-controller-manager's own; the others, under the same prefix, are
// minicp's, to count what a cascade costs.
type metrics struct {
	syncErrors     prometheus.Counter     // garbagecollector_controller_resources_sync_error_total (upstream)
	deletes        *prometheus.CounterVec // DELETEs sent, by propagation policy
	orphaned       prometheus.Counter     // ownerReferences removed from dependents
	finalizers     *prometheus.CounterVec // orphan / foregroundDeletion finalizers removed
	ownerChecks    prometheus.Counter     // quorum GETs of an owner
	graphNodes     prometheus.GaugeFunc   // objects in the graph
	monitoredTotal prometheus.Gauge       // resources watched
}

func newMetrics(reg prometheus.Registerer, graphSize func() float64) *metrics {
	const ns, sub = "garbagecollector", "controller"
	return &metrics{
		syncErrors: promreg.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "resources_sync_error_total",
			Help: "Number of garbage collector resources sync errors",
		})),
		deletes: promreg.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "dependent_deletions_total",
			Help: "DELETE requests the garbage collector sent for dependents whose owners are gone or being deleted in foreground, by propagation policy",
		}, []string{"propagation_policy"})),
		orphaned: promreg.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "owner_references_removed_total",
			Help: "ownerReferences the garbage collector removed from dependents (orphaning, or references to owners that are gone)",
		})),
		finalizers: promreg.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "finalizers_removed_total",
			Help: "orphan and foregroundDeletion finalizers the garbage collector removed from owners it had finished with",
		}, []string{"finalizer"})),
		ownerChecks: promreg.Register(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "owner_lookups_total",
			Help: "Quorum reads (GET with no resourceVersion) of an owner, to check that it still exists with the UID its dependents name",
		})),
		graphNodes: promreg.Register(reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "graph_objects",
			Help: "Objects in the garbage collector's owner-to-dependents graph",
		}, graphSize)),
		monitoredTotal: promreg.Register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "monitored_resources",
			Help: "Resources whose metadata the garbage collector watches",
		})),
	}
}
