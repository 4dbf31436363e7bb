package controlplane

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"minicp/ui"
)

// registerUI adds the live teaching page (/ui/) and the views it reads
// (/debug/etcd, /debug/nodes, /debug/events, /debug/load) to the
// apiserver, beside /debug/watchcache.
func (cp *ControlPlane) registerUI() {
	var grace time.Duration
	if cp.cfg.Nodes.LifecycleController {
		grace = cp.cfg.Nodes.Controller.GracePeriod
	}
	ui.New(ui.Config{
		Resources:   cp.cfg.Resources,
		Store:       cp.cache,
		Cache:       cp.cache,
		EtcdClient:  cp.etcdClient,
		Cluster:     cp.etcd,
		Etcd:        cp.cfg.embeddedEtcd(),
		Others:      cp.triage.otherClusters(),
		GracePeriod: grace,
		Gatherer:    prometheus.Gatherers{cp.metrics, prometheus.DefaultGatherer},
		Logger:      cp.logger,
	}).Register(cp.api)
}
