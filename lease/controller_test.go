package lease

import (
	"context"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

// passController is a controller whose informers run but whose monitor
// passes the test makes itself, one per call of pass.
type passController struct {
	*Controller
	t   *testing.T
	cs  *fake.Clientset
	clk *clocktesting.FakeClock
}

func newPassController(t *testing.T, objects ...k8sruntime.Object) *passController {
	t.Helper()
	cs, clk := fake.NewClientset(objects...), clocktesting.NewFakeClock(t0)
	watching := countWatches(cs)
	cfg := NewControllerConfig()
	cfg.Clock = clk
	c, err := NewController(cfg, cs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.factory.Start(ctx.Done())
	for typ, ok := range c.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("informer for %v did not sync", typ)
		}
	}
	t.Cleanup(func() { cancel(); c.factory.Shutdown() })
	// A synced informer has listed but may not watch yet, and the fake
	// tracker replays into a new watch the objects written since the
	// list, never the ones deleted: a test's delete made in between
	// would never reach the informer.
	waitFor(t, "the informers to watch nodes and leases", func() bool {
		return watching("nodes") && watching("leases")
	})
	return &passController{Controller: c, t: t, cs: cs, clk: clk}
}

// countWatches makes cs's watches through the tracker itself and
// returns whether a watch of a resource has been registered, so that a
// test can wait until an informer's watch is in place, not only asked.
func countWatches(cs *fake.Clientset) func(resource string) bool {
	var mu sync.Mutex
	started := map[string]bool{}
	cs.PrependWatchReactor("*", func(action k8stesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if w, ok := action.(k8stesting.WatchActionImpl); ok {
			opts = w.ListOptions
		}
		gvr := action.GetResource()
		w, err := cs.Tracker().Watch(gvr, action.GetNamespace(), opts)
		if err != nil {
			return true, nil, err
		}
		mu.Lock()
		started[gvr.Resource] = true
		mu.Unlock()
		return true, w, nil
	})
	return func(resource string) bool {
		mu.Lock()
		defer mu.Unlock()
		return started[resource]
	}
}

// at moves the clock to t0+d and runs one monitor pass.
func (p *passController) at(d time.Duration) {
	p.t.Helper()
	p.clk.SetTime(t0.Add(d))
	p.monitor(context.Background())
}

// renew writes the node's Lease with renewTime at the current fake time
// and waits until the controller's informer has seen it.
func (p *passController) renew(name string) {
	p.t.Helper()
	ctx := context.Background()
	l, err := p.cs.CoordinationV1().Leases(NodeLeaseNamespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		p.t.Fatal(err)
	}
	l.Spec.RenewTime = &metav1.MicroTime{Time: p.clk.Now()}
	if _, err := p.cs.CoordinationV1().Leases(NodeLeaseNamespace).Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		p.t.Fatal(err)
	}
	waitFor(p.t, "the informer to see the renewal", func() bool {
		seen, err := p.leases.Get(name)
		return err == nil && seen.Spec.RenewTime.Equal(l.Spec.RenewTime)
	})
}

// node returns the node as stored.
func (p *passController) node(name string) *corev1.Node {
	p.t.Helper()
	return getNode(p.t, p.cs, name)
}

// waitNodeSeen waits until the informer has the node at its stored state.
func (p *passController) waitNodeSeen(name string) {
	p.t.Helper()
	stored := p.node(name)
	waitFor(p.t, "the informer to see the node", func() bool {
		seen, err := p.nodes.Get(name)
		return err == nil && seen.ResourceVersion == stored.ResourceVersion
	})
}

func readyOf(n *corev1.Node) corev1.NodeCondition {
	if c := conditionOf(&n.Status, corev1.NodeReady); c != nil {
		return *c
	}
	return corev1.NodeCondition{}
}

func hasTaint(n *corev1.Node, key string, effect corev1.TaintEffect) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key && t.Effect == effect {
			return true
		}
	}
	return false
}

func heartbeatingNode(name string) (*corev1.Node, *coordinationv1.Lease) {
	node := newNode(name, 0, t0)
	return node, newLease(node, DefaultLeaseDuration, t0)
}

// M11: a node whose lease is renewed stays Ready; once it
// is not renewed for the grace period (50 s), Ready becomes Unknown with
// upstream's reason and message, and the unreachable taints appear.
func TestANodeWhoseLeaseStopsBeingRenewedBecomesUnknownAfterTheGracePeriod(t *testing.T) {
	node, lease := heartbeatingNode("node-0")
	p := newPassController(t, node, lease)
	p.at(0)
	for d := 10 * time.Second; d <= 60*time.Second; d += 10 * time.Second {
		p.clk.SetTime(t0.Add(d))
		p.renew("node-0")
		p.at(d)
	}
	if got := readyOf(p.node("node-0")); got.Status != corev1.ConditionTrue {
		t.Fatalf("Ready while the lease is renewed: got %s, want True", got.Status)
	}

	// The last renewal was seen at 60 s.
	p.at(60*time.Second + DefaultGracePeriod)
	if got := readyOf(p.node("node-0")); got.Status != corev1.ConditionTrue {
		t.Fatalf("Ready exactly one grace period after the last renewal: got %s, want True", got.Status)
	}
	p.at(60*time.Second + DefaultGracePeriod + DefaultMonitorPeriod)
	got := p.node("node-0")
	ready := readyOf(got)
	if ready.Status != corev1.ConditionUnknown || ready.Reason != "NodeStatusUnknown" || ready.Message != "Kubelet stopped posting node status." {
		t.Fatalf("Ready after the grace period: got %s %q %q, want Unknown NodeStatusUnknown %q",
			ready.Status, ready.Reason, ready.Message, "Kubelet stopped posting node status.")
	}
	if !ready.LastHeartbeatTime.Time.Equal(t0) {
		t.Errorf("lastHeartbeatTime: got %v, want the kubelet's %v (the controller does not heartbeat)", ready.LastHeartbeatTime, t0)
	}
	for _, typ := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
		if c := conditionOf(&got.Status, typ); c.Status != corev1.ConditionUnknown {
			t.Errorf("%s: got %s, want Unknown", typ, c.Status)
		}
	}
	for _, effect := range []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute} {
		if !hasTaint(got, corev1.TaintNodeUnreachable, effect) {
			t.Errorf("taints: got %v, want node.kubernetes.io/unreachable:%s", got.Spec.Taints, effect)
		}
	}
}

// M12: with the etcd binding, a dead node's Lease key is
// deleted by etcd when its TTL runs out; the controller takes a deleted
// lease as a dead node at the next pass, grace period or not.
func TestADeletedLeaseMarksTheNodeUnknownAtTheNextPass(t *testing.T) {
	node, lease := heartbeatingNode("node-0")
	p := newPassController(t, node, lease)
	p.at(0)
	if err := p.cs.CoordinationV1().Leases(NodeLeaseNamespace).Delete(context.Background(), "node-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the informer to see the deletion", func() bool { _, err := p.leases.Get("node-0"); return err != nil })
	p.at(DefaultMonitorPeriod)
	if got := readyOf(p.node("node-0")); got.Status != corev1.ConditionUnknown || got.Reason != ReasonNodeStatusUnknown {
		t.Fatalf("Ready after the lease was deleted: got %s %s, want Unknown %s", got.Status, got.Reason, ReasonNodeStatusUnknown)
	}
}

// When the kubelet is back and reports Ready, the taints go; taints
// someone else set stay.
func TestANodeReportingReadyAgainLosesTheControllerTaintsOnly(t *testing.T) {
	node, lease := heartbeatingNode("node-0")
	node.Spec.Taints = []corev1.Taint{{Key: "example.com/dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}}
	p := newPassController(t, node, lease)
	p.at(0)
	p.at(DefaultGracePeriod + time.Second)
	tainted := p.node("node-0")
	if !hasTaint(tainted, corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute) {
		t.Fatalf("taints of the silent node: got %v, want unreachable", tainted.Spec.Taints)
	}

	// The kubelet comes back: it posts Ready with a fresh heartbeat.
	back := DefaultGracePeriod + 20*time.Second
	p.clk.SetTime(t0.Add(back))
	setHealthyConditions(&tainted.Status, p.clk.Now())
	if _, err := p.cs.CoreV1().Nodes().UpdateStatus(context.Background(), tainted, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p.waitNodeSeen("node-0")
	p.renew("node-0")
	p.at(back)
	got := p.node("node-0")
	if readyOf(got).Status != corev1.ConditionTrue {
		t.Fatalf("Ready after the kubelet came back: got %s, want True", readyOf(got).Status)
	}
	if len(got.Spec.Taints) != 1 || got.Spec.Taints[0].Key != "example.com/dedicated" {
		t.Errorf("taints after recovery: got %v, want only example.com/dedicated", got.Spec.Taints)
	}
}

func TestANotReadyNodeGetsTheNotReadyTaints(t *testing.T) {
	node, lease := heartbeatingNode("node-0")
	ready := conditionOf(&node.Status, corev1.NodeReady)
	ready.Status, ready.Reason = corev1.ConditionFalse, "KubeletNotReady"
	p := newPassController(t, node, lease)
	p.at(0)
	got := p.node("node-0")
	if !hasTaint(got, corev1.TaintNodeNotReady, corev1.TaintEffectNoSchedule) || !hasTaint(got, corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute) {
		t.Errorf("taints of a NotReady node: got %v, want node.kubernetes.io/not-ready NoSchedule and NoExecute", got.Spec.Taints)
	}
}

// The running controller checks nodes every MonitorPeriod on its clock.
func TestAStartedControllerChecksNodesEveryMonitorPeriod(t *testing.T) {
	node, lease := heartbeatingNode("node-0")
	cs, clk := fake.NewClientset(node, lease), clocktesting.NewFakeClock(t0)
	cfg := NewControllerConfig()
	cfg.Clock = clk
	c, err := NewController(cfg, cs)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	// Step one monitor period at a time until the node is marked.
	waitFor(t, "the node to be marked Unknown", func() bool {
		if readyOf(getNode(t, cs, "node-0")).Status == corev1.ConditionUnknown {
			return true
		}
		clk.Step(cfg.MonitorPeriod)
		return false
	})
	marked := readyOf(getNode(t, cs, "node-0")).LastTransitionTime.Sub(t0)
	if marked <= cfg.GracePeriod || marked > cfg.GracePeriod+2*cfg.MonitorPeriod {
		t.Errorf("marked Unknown %v after the last heartbeat, want just over the %v grace period", marked, cfg.GracePeriod)
	}
}
