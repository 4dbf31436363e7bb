package lease

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// Agent is the kubelet side of heartbeats for cfg.Nodes simulated nodes:
// it registers each node, keeps its Lease renewed and posts its status.
// NewAgent builds it, Start runs it, Stop ends it.
type Agent struct {
	cfg    AgentConfig
	client kubernetes.Interface
	clock  clock.WithTicker
	log    *slog.Logger
	stats  Stats
	sched  *schedule

	nodes  []*simNode          // fixed by NewAgent
	byName map[string]*simNode // fixed by NewAgent; read by the informer

	// unregistered counts nodes that have not yet been registered with a
	// Lease written; the worker that brings it to 0 closes registered.
	unregistered atomic.Int64
	registered   chan struct{}

	startOnce, stopOnce sync.Once
	cancel              context.CancelFunc // ends the run context; set by Start
	factory             informers.SharedInformerFactory
	podFactory          informers.SharedInformerFactory // nil unless FinishPodDeletions (pods.go)
	// wg counts the schedule's goroutine and the workers.
	wg sync.WaitGroup
}

// simNode is one simulated node. Its fields below the schedule's are owned
// by whoever holds the node: the schedule while it waits, one worker while
// it is being synced (see schedule), so they need no lock.
type simNode struct {
	name    string
	ordinal int // position among the agent's nodes, for its address

	// at and index belong to the schedule (guarded by schedule.mu): when
	// the node is due, and its place in the queue (-1: not queued).
	at    time.Time
	index int

	// statusStale is set by the informer when the stored node no longer
	// says what this node reports (someone changed its Ready condition),
	// and cleared by the worker that posts the status.
	statusStale atomic.Bool

	node           *corev1.Node          // as last written or read; nil until registered
	lease          *coordinationv1.Lease // as last written or read; nil until known
	everRegistered bool
	renewAt        time.Time // next lease renewal
	statusAt       time.Time // next unconditional status post
	lastRenew      time.Time // last successful renewal
	failures       int       // consecutive failed syncs
}

// NewAgent returns an agent for cfg's nodes, talking to the apiserver
// through client. One client serves all nodes.
func NewAgent(cfg AgentConfig, client kubernetes.Interface) (*Agent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a := &Agent{
		cfg:        cfg,
		client:     client,
		clock:      orRealClock(cfg.Clock),
		log:        orDiscard(cfg.Logger),
		byName:     map[string]*simNode{},
		registered: make(chan struct{}),
	}
	a.sched = newSchedule(a.clock)
	for i := range cfg.Nodes {
		n := &simNode{name: fmt.Sprintf("%s%d", cfg.NodePrefix, i), ordinal: i, index: -1}
		a.nodes = append(a.nodes, n)
		a.byName[n.name] = n
	}
	a.unregistered.Store(int64(cfg.Nodes))
	if cfg.Nodes == 0 {
		close(a.registered)
	}
	return a, nil
}

// NodeNames returns the names of the agent's nodes, in order.
func (a *Agent) NodeNames() []string {
	names := make([]string, len(a.nodes))
	for i, n := range a.nodes {
		names[i] = n.name
	}
	return names
}

// Start begins heartbeating: every node is due at once for registration.
// It returns at once; the agent runs until Stop.
func (a *Agent) Start() {
	a.startOnce.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		a.cancel = cancel
		now := a.clock.Now()
		for _, n := range a.nodes {
			a.sched.add(n, now)
		}
		// work carries due nodes from the schedule to the workers; the
		// schedule's goroutine closes it when ctx ends.
		work := make(chan *simNode)
		a.wg.Add(1 + a.cfg.Workers)
		go func() { // hands due nodes out; ends with ctx
			defer a.wg.Done()
			a.sched.run(ctx, work)
		}()
		for range a.cfg.Workers {
			go func() { // syncs one node at a time; ends when work is closed
				defer a.wg.Done()
				for n := range work {
					a.sched.add(n, a.sync(ctx, n))
				}
			}()
		}
		a.watchOwnNodes(ctx)
		a.watchOwnPods(ctx)
	})
}

// watchOwnNodes starts one informer over the nodes this agent (or another
// simulator) registered: a node whose stored Ready condition is not True
// posts its status at its next turn, which is made now.
func (a *Agent) watchOwnNodes(ctx context.Context) {
	if len(a.nodes) == 0 {
		return
	}
	a.factory = informers.NewSharedInformerFactoryWithOptions(a.client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = SimulatedLabel + "=true" }))
	onNode := func(obj any) {
		node, ok := obj.(*corev1.Node)
		if !ok {
			return
		}
		n := a.byName[node.Name]
		if n == nil {
			return
		}
		if c := conditionOf(&node.Status, corev1.NodeReady); c != nil && c.Status != corev1.ConditionTrue && !n.statusStale.Swap(true) {
			a.log.Info("node's Ready condition was changed by someone else; posting status", "node", node.Name, "ready", c.Status, "reason", c.Reason)
			a.sched.expedite(n)
		}
	}
	// The handler only reads immutable maps, sets an atomic flag and
	// takes the schedule's lock: safe on the informer's goroutine.
	if _, err := a.factory.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    onNode,
		UpdateFunc: func(_, obj any) { onNode(obj) },
	}); err != nil {
		a.log.Error("cannot watch the simulated nodes; a node marked Unknown will only recover at its next status report", "err", err)
		return
	}
	a.factory.Start(ctx.Done())
}

// WaitRegistered blocks until every node has been registered and has
// written its Lease once, or ctx ends.
func (a *Agent) WaitRegistered(ctx context.Context) error {
	select {
	case <-a.registered:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%d of %d simulated nodes registered: %w", len(a.nodes)-int(a.unregistered.Load()), len(a.nodes), context.Cause(ctx))
	}
}

// Snapshot returns the agent's statistics and starts a new latency window.
func (a *Agent) Snapshot() Snapshot { return a.stats.Snapshot(a.clock.Now()) }

// Stop ends heartbeating and returns once every goroutine the agent
// started has returned: the schedule's, the workers' (each finishes the
// request it is making, which the cancelled context cuts short) and the
// informer's. The nodes' Leases are left to expire, as when a kubelet dies.
// An agent runs once: Start after Stop does nothing.
func (a *Agent) Stop() {
	a.startOnce.Do(func() {}) // a Start after this does nothing
	a.stopOnce.Do(func() {
		if a.cancel == nil { // never started
			return
		}
		a.cancel()
		a.wg.Wait()
		if a.factory != nil {
			a.factory.Shutdown()
		}
		if a.podFactory != nil {
			a.podFactory.Shutdown()
		}
		a.log.Info("simulated nodes stopped", "nodes", len(a.nodes))
	})
}
