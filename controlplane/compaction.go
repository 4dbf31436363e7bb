package controlplane

import (
	"minicp/registry"
)

// startCompactor starts the apiserver's own etcd compactor, as
// kube-apiserver does every --etcd-compaction-interval, whether etcd is
// embedded or not. etcd's --auto-compaction-* is a second, independent
// compactor inside the embedded member; either may be turned off.
func (cp *ControlPlane) startCompactor() {
	cp.compactor = registry.StartCompactor(cp.etcdClient, cp.cfg.EtcdCompactionInterval, cp.logger)
}

// Compactor is the apiserver's etcd compactor (disabled when
// --etcd-compaction-interval is 0).
func (cp *ControlPlane) Compactor() *registry.Compactor { return cp.compactor }

// stopCompactor stops the compactor if it was started.
func (cp *ControlPlane) stopCompactor() {
	if cp.compactor != nil {
		cp.compactor.Stop()
	}
}
