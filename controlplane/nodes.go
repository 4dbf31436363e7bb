package controlplane

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"minicp/lease"
	"minicp/registry"
)

// NodesConfig is the node side of minicp (M11, M12): simulated
// kubelets heartbeating in-process, the node lifecycle controller, and
// whether Node Lease keys are bound to etcd leases.
type NodesConfig struct {
	// Simulated is the number of nodes the in-process agent runs
	// (--simulated-nodes); 0 runs none.
	Simulated int
	// LeaseEtcdBinding binds each Lease in kube-node-lease to an etcd
	// lease with TTL = leaseDurationSeconds (--node-lease-etcd-binding).
	// Upstream binds only Events; false gives upstream's plain keys.
	LeaseEtcdBinding bool
	// LifecycleController runs the node lifecycle controller
	// (--node-lifecycle-controller).
	LifecycleController bool
	// Agent configures the simulated nodes; its Nodes is set from Simulated.
	Agent lease.AgentConfig
	// Controller configures the node lifecycle controller.
	Controller lease.ControllerConfig
}

// NewNodesConfig returns minicp's defaults: three simulated nodes, the
// etcd binding, and the controller with upstream's timings.
func NewNodesConfig() NodesConfig {
	return NodesConfig{
		Simulated:           3,
		LeaseEtcdBinding:    true,
		LifecycleController: true,
		Agent:               lease.NewAgentConfig(),
		Controller:          lease.NewControllerConfig(),
	}
}

// AddFlags binds the node flags.
func (c *NodesConfig) AddFlags(fs *flag.FlagSet) {
	fs.IntVar(&c.Simulated, "simulated-nodes", c.Simulated, "number of simulated nodes heartbeating in-process (0 = none); cmd/kubelet-sim runs more from outside")
	fs.BoolVar(&c.LeaseEtcdBinding, "node-lease-etcd-binding", c.LeaseEtcdBinding, "bind each Lease in kube-node-lease to an etcd lease with TTL = leaseDurationSeconds, so etcd deletes a dead node's Lease; false stores plain keys, as upstream (which binds only Events)")
	fs.BoolVar(&c.LifecycleController, "node-lifecycle-controller", c.LifecycleController, "run the node lifecycle controller, which marks silent nodes Ready=Unknown and taints them unreachable")
	fs.DurationVar(&c.Controller.GracePeriod, "node-monitor-grace-period", c.Controller.GracePeriod, "how long a node may go without renewing its Lease before it is marked Ready=Unknown")
	fs.DurationVar(&c.Controller.MonitorPeriod, "node-monitor-period", c.Controller.MonitorPeriod, "how often the node lifecycle controller checks nodes")
	fs.Func("node-lease-duration-seconds", fmt.Sprintf("leaseDurationSeconds of the simulated nodes' Leases, renewed every quarter of it (default %d)", int(c.Agent.LeaseDuration/time.Second)), func(s string) error {
		var seconds int
		if _, err := fmt.Sscan(s, &seconds); err != nil || seconds < 1 {
			return fmt.Errorf("want a whole number of seconds, at least 1, got %q", s)
		}
		c.Agent.LeaseDuration = time.Duration(seconds) * time.Second
		return nil
	})
}

// Validate checks the node settings.
func (c *NodesConfig) Validate() error {
	var errs []error
	if c.Simulated < 0 {
		errs = append(errs, fmt.Errorf("--simulated-nodes must not be negative, got %d", c.Simulated))
	}
	agent := c.Agent
	agent.Nodes = max(c.Simulated, 0)
	errs = append(errs, agent.Validate())
	if c.LifecycleController {
		errs = append(errs, c.Controller.Validate())
	}
	return errors.Join(errs...)
}

// keyTTL is the registry's KeyTTL with the etcd binding on: a Lease in
// kube-node-lease lives leaseDurationSeconds after its last write. nil
// (no binding) when the binding is off.
func (c *NodesConfig) keyTTL() func(*registry.Resource, runtime.Object) time.Duration {
	if !c.LeaseEtcdBinding {
		return nil
	}
	return func(_ *registry.Resource, obj runtime.Object) time.Duration {
		l, ok := obj.(*coordinationv1.Lease)
		if !ok || l.Namespace != lease.NodeLeaseNamespace || l.Spec.LeaseDurationSeconds == nil || *l.Spec.LeaseDurationSeconds <= 0 {
			return 0
		}
		return time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
}

// nodes is the simulated kubelets, clients of the apiserver like real
// ones; the node lifecycle controller is the controller manager's.
type nodes struct {
	agent     *lease.Agent
	closeIdle func() // closes the agent's client's idle connections
}

// startNodes starts, once the apiserver serves, the simulated nodes, and
// waits until every one is registered, so that `kubectl get nodes` lists
// them as soon as minicp says it is ready.
func (cp *ControlPlane) startNodes(ctx context.Context) error {
	cfg := cp.cfg.Nodes
	if cfg.Simulated == 0 {
		return nil
	}
	cs, closeIdle, err := lease.NewClientset(cp.clientConfig(), cfg.Agent.Workers)
	if err != nil {
		return err
	}
	acfg := cfg.Agent
	acfg.Nodes = cfg.Simulated
	acfg.Logger = cp.logger.With("component", "simulated-nodes")
	acfg.Recorder = cp.recorder(lease.KubeletComponent)
	agent, err := lease.NewAgent(acfg, cs)
	if err != nil {
		closeIdle()
		return err
	}
	cp.nodes = &nodes{agent: agent, closeIdle: closeIdle}
	agent.Start()
	return agent.WaitRegistered(ctx)
}

// stopNodes stops the simulated nodes, returning once their goroutines
// have, and closes their client's connections.
func (cp *ControlPlane) stopNodes() {
	if cp.nodes == nil {
		return
	}
	cp.nodes.agent.Stop()
	cp.nodes.closeIdle()
}

// Agent is the in-process agent running the simulated nodes, or nil.
func (cp *ControlPlane) Agent() *lease.Agent {
	if cp.nodes == nil {
		return nil
	}
	return cp.nodes.agent
}
