package lease

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	coordinationlisters "k8s.io/client-go/listers/coordination/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"minicp/internal/trim"
)

// Controller is the node lifecycle controller: it marks nodes that stopped
// heartbeating Ready=Unknown and keeps the unreachable / not-ready taints
// in line with each node's Ready condition. It records upstream's events:
// RegisteredNode when it first sees a node, NodeNotReady when it takes a
// node's Ready from True, RemovingNode when the Node is gone (events.go). NewController builds it, Start
// runs it, Stop ends it.
type Controller struct {
	cfg    ControllerConfig
	client kubernetes.Interface
	clock  clock.WithTicker
	log    *slog.Logger

	factory informers.SharedInformerFactory
	nodes   corelisters.NodeLister
	leases  coordinationlisters.LeaseNamespaceLister

	// health is the controller's record of each node; only the monitor
	// goroutine touches it.
	health map[string]*nodeHealth

	startOnce, stopOnce sync.Once
	cancel              context.CancelFunc // ends the informers and the monitor loop; set by Start
	// wg counts the monitor goroutine.
	wg sync.WaitGroup
}

// nodeHealth is what the controller last saw of a node, and when.
type nodeHealth struct {
	heartbeat metav1.Time       // the Ready condition's lastHeartbeatTime
	renewTime *metav1.MicroTime // the Lease's renewTime
	leaseSeen bool              // a Lease for the node was seen at least once
	// probe is the controller's time of the last sign of life: when a new
	// heartbeat or renewTime was first seen.
	probe time.Time
	uid   types.UID // the Node's, for the RemovingNode event once it is gone
}

// isReady reports whether node's Ready condition is True.
func isReady(node *corev1.Node) bool {
	ready := conditionOf(&node.Status, corev1.NodeReady)
	return ready != nil && ready.Status == corev1.ConditionTrue
}

// NewController returns a controller using client.
func NewController(cfg ControllerConfig, client kubernetes.Interface) (*Controller, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Controller{
		cfg:    cfg,
		client: client,
		clock:  orRealClock(cfg.Clock),
		log:    orDiscard(cfg.Logger),
		health: map[string]*nodeHealth{},
	}
	// One factory: Leases from kube-node-lease only; Nodes are
	// cluster-scoped and unaffected by the namespace.
	c.factory = informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(NodeLeaseNamespace), informers.WithTransform(trim.ManagedFields))
	c.nodes = c.factory.Core().V1().Nodes().Lister()
	c.leases = c.factory.Coordination().V1().Leases().Lister().Leases(NodeLeaseNamespace)
	return c, nil
}

// Start starts the informers, waits until they have synced (ctx bounds
// only this wait), checks every node once, and then every MonitorPeriod
// until Stop.
func (c *Controller) Start(ctx context.Context) error {
	err := fmt.Errorf("node lifecycle controller already started or stopped")
	c.startOnce.Do(func() { err = c.start(ctx) })
	return err
}

func (c *Controller) start(ctx context.Context) error {
	runCtx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	nodeInformer := c.factory.Core().V1().Nodes().Informer()
	leaseInformer := c.factory.Coordination().V1().Leases().Informer()
	c.factory.Start(runCtx.Done())
	// WaitFor wakes when both have synced; WaitForCacheSync would poll
	// every 100 ms, and minicp's start-up waits for this.
	if !cache.WaitFor(ctx, "", nodeInformer.HasSyncedChecker(), leaseInformer.HasSyncedChecker()) {
		cancel()
		c.factory.Shutdown()
		return fmt.Errorf("node lifecycle controller: node and lease informers did not sync: %w", context.Cause(ctx))
	}
	ticker := c.clock.NewTicker(c.cfg.MonitorPeriod)
	c.wg.Add(1)
	go func() { // the monitor loop: one pass per tick, until Stop
		defer c.wg.Done()
		defer ticker.Stop()
		for {
			c.monitor(runCtx)
			select {
			case <-ticker.C():
			case <-runCtx.Done():
				return
			}
		}
	}()
	return nil
}

// Stop ends the monitor loop and the informers and returns once their
// goroutines have returned.
func (c *Controller) Stop() {
	c.startOnce.Do(func() {}) // a Start after this fails
	c.stopOnce.Do(func() {
		if c.cancel == nil {
			return
		}
		c.cancel()
		c.wg.Wait()
		c.factory.Shutdown()
	})
}

// monitor is one pass over every node: record signs of life, mark nodes
// without any for the grace period, and reconcile their taints.
func (c *Controller) monitor(ctx context.Context) {
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		c.log.Error("listing nodes from the informer", "err", err)
		return
	}
	now := c.clock.Now()
	seen := make(map[string]bool, len(nodes))
	for _, node := range nodes {
		seen[node.Name] = true
		if err := c.checkNode(ctx, node, now); err != nil && ctx.Err() == nil {
			c.log.Debug("node check failed; retrying at the next pass", "node", node.Name, "err", err)
		}
	}
	for name, h := range c.health {
		if !seen[name] {
			delete(c.health, name)
			recordEvent(c.cfg.Recorder, controllerNodeRef(name, h.uid), ReasonRemovingNode, actionRegister,
				fmt.Sprintf("Node %s event: Removing Node %s from Controller", name, name))
		}
	}
}

// checkNode updates the record of one node and acts on it.
func (c *Controller) checkNode(ctx context.Context, node *corev1.Node, now time.Time) error {
	lease, err := c.leases.Get(node.Name)
	if err != nil {
		lease = nil // not found: no lease (yet, or any more)
	}
	h := c.observe(node, lease, now)
	if why := c.silence(h, lease, now); why != "" {
		wasReady := isReady(node)
		if node, err = c.markUnknown(ctx, node, h, now, why); err != nil {
			return err
		}
		if wasReady && !isReady(node) { // once, at the change, as upstream
			recordEvent(c.cfg.Recorder, controllerNodeRef(node.Name, node.UID), ReasonNodeNotReady, actionStatusChange,
				statusMessage(node.Name, ReasonNodeNotReady))
		}
	}
	return c.reconcileTaints(ctx, node, now)
}

// observe records the signs of life in node and lease: a lastHeartbeatTime
// or a renewTime not seen before moves the node's probe time to now.
func (c *Controller) observe(node *corev1.Node, lease *coordinationv1.Lease, now time.Time) *nodeHealth {
	h := c.health[node.Name]
	if h == nil {
		h = &nodeHealth{probe: now, uid: node.UID}
		c.health[node.Name] = h
		recordEvent(c.cfg.Recorder, controllerNodeRef(node.Name, node.UID), ReasonRegisteredNode, actionRegister,
			fmt.Sprintf("Node %s event: Registered Node %s in Controller", node.Name, node.Name))
	}
	if ready := conditionOf(&node.Status, corev1.NodeReady); ready != nil && !ready.LastHeartbeatTime.Equal(&h.heartbeat) {
		h.heartbeat, h.probe = ready.LastHeartbeatTime, now
	}
	if lease != nil {
		h.leaseSeen = true
		if rt := lease.Spec.RenewTime; rt != nil && (h.renewTime == nil || h.renewTime.Before(rt)) {
			h.renewTime, h.probe = rt, now
		}
	}
	return h
}

// silence says why a node counts as no longer heartbeating, or "" if it
// does: no sign of life for the grace period, or its Lease was deleted.
func (c *Controller) silence(h *nodeHealth, lease *coordinationv1.Lease, now time.Time) string {
	switch {
	case h.leaseSeen && lease == nil:
		return "its Lease was deleted"
	case now.Sub(h.probe) > c.cfg.GracePeriod:
		return fmt.Sprintf("no heartbeat for more than %s", c.cfg.GracePeriod)
	}
	return ""
}
