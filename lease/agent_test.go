package lease

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"minicp/internal/testsupport"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// testAgent starts an agent for n nodes on a fake clientset and a fake
// clock, and stops it when the test ends.
func testAgent(t *testing.T, n int, cs *fake.Clientset, clk *clocktesting.FakeClock) *Agent {
	t.Helper()
	cfg := NewAgentConfig()
	cfg.Nodes = n
	cfg.Workers = 4
	cfg.Clock = clk
	a, err := NewAgent(cfg, cs)
	if err != nil {
		t.Fatal(err)
	}
	a.Start()
	t.Cleanup(a.Stop)
	return a
}

// settle waits until the agent is idle: every node is back in the
// schedule, which waits on the clock for the next one.
func settle(t *testing.T, a *Agent, clk *clocktesting.FakeClock) {
	t.Helper()
	waitFor(t, "every node to be synced and the schedule to wait on the clock", func() bool {
		a.sched.mu.Lock()
		queued := len(a.sched.queue)
		a.sched.mu.Unlock()
		return queued == len(a.nodes) && clk.HasWaiters()
	})
}

// advance moves the fake clock by total in steps of step, letting the
// agent catch up after each.
func advance(t *testing.T, a *Agent, clk *clocktesting.FakeClock, total, step time.Duration) {
	t.Helper()
	for elapsed := time.Duration(0); elapsed < total; elapsed += step {
		settle(t, a, clk)
		clk.Step(step)
	}
	settle(t, a, clk)
}

// waitFor polls cond for up to 10 s of real time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testsupport.Eventually(t, 10*time.Second, what, cond)
}

// recorder notes the fake clock's time of each request to the fake
// clientset, by "verb resource[/subresource]" and, for writes, also by
// "verb resource name". Register it after reactors that answer requests
// themselves, or it does not see those requests.
type recorder struct {
	clk *clocktesting.FakeClock
	mu  sync.Mutex // guards at
	at  map[string][]time.Time
}

func record(cs *fake.Clientset, clk *clocktesting.FakeClock) *recorder {
	r := &recorder{clk: clk, at: map[string][]time.Time{}}
	cs.PrependReactor("*", "*", func(a k8stesting.Action) (bool, k8sruntime.Object, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		key := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			key += "/" + a.GetSubresource()
		}
		r.at[key] = append(r.at[key], r.clk.Now())
		if w, ok := a.(interface{ GetObject() k8sruntime.Object }); ok {
			if m, err := meta.Accessor(w.GetObject()); err == nil {
				r.at[key+" "+m.GetName()] = append(r.at[key+" "+m.GetName()], r.clk.Now())
			}
		}
		return false, nil, nil
	})
	return r
}

func (r *recorder) times(key string) []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.at[key]...)
}

func (r *recorder) count(key string) int { return len(r.times(key)) }

func getLease(t *testing.T, cs *fake.Clientset, name string) *coordinationv1.Lease {
	t.Helper()
	l, err := cs.CoordinationV1().Leases(NodeLeaseNamespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("lease %s: %v", name, err)
	}
	return l
}

func getNode(t *testing.T, cs *fake.Clientset, name string) *corev1.Node {
	t.Helper()
	n, err := cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("node %s: %v", name, err)
	}
	return n
}

// M11: each node registers a Ready Node and a Lease in
// kube-node-lease held by it, with upstream's 40 s duration.
func TestAgentRegistersReadyNodesAndTheirLeases(t *testing.T) {
	cs, clk := fake.NewClientset(), clocktesting.NewFakeClock(t0)
	a := testAgent(t, 3, cs, clk)
	if err := a.WaitRegistered(context.Background()); err != nil {
		t.Fatal(err)
	}
	settle(t, a, clk)
	for _, name := range []string{"node-0", "node-1", "node-2"} {
		node := getNode(t, cs, name)
		ready := conditionOf(&node.Status, corev1.NodeReady)
		if ready == nil || ready.Status != corev1.ConditionTrue || node.Labels[SimulatedLabel] != "true" || node.Status.Capacity.Cpu().IsZero() {
			t.Errorf("node %s: got Ready %v, labels %v, capacity %v; want Ready True, simulated, with capacity", name, ready, node.Labels, node.Status.Capacity)
		}
		l := getLease(t, cs, name)
		if *l.Spec.HolderIdentity != name || *l.Spec.LeaseDurationSeconds != 40 || !l.Spec.RenewTime.Time.Equal(t0) {
			t.Errorf("lease %s: got holder %q, duration %d, renewTime %v; want %q, 40, %v", name, *l.Spec.HolderIdentity, *l.Spec.LeaseDurationSeconds, l.Spec.RenewTime, name, t0)
		}
		if len(l.OwnerReferences) != 1 || l.OwnerReferences[0].Kind != "Node" || l.OwnerReferences[0].Name != name {
			t.Errorf("lease %s: owner references %v, want its Node", name, l.OwnerReferences)
		}
	}
	if got := a.Snapshot().Registered; got != 3 {
		t.Errorf("registered: got %d, want 3", got)
	}
}

// M11: renewals come every leaseDuration/4 (0-4% late)
// and write from the last Lease written: no GET once the lease is known.
func TestRenewalsComeEveryQuarterOfTheDurationWithoutAGet(t *testing.T) {
	cs, clk := fake.NewClientset(), clocktesting.NewFakeClock(t0)
	rec := record(cs, clk)
	a := testAgent(t, 5, cs, clk)
	if err := a.WaitRegistered(context.Background()); err != nil {
		t.Fatal(err)
	}
	advance(t, a, clk, 61*time.Second, 100*time.Millisecond)

	for _, name := range a.NodeNames() {
		renewals := rec.times("update leases " + name)
		if len(renewals) < 5 {
			t.Fatalf("lease %s: got %d renewals in 61 s, want at least 5", name, len(renewals))
		}
		for i := 1; i < len(renewals); i++ {
			// Due times are seen at the next 100 ms step.
			if gap := renewals[i].Sub(renewals[i-1]); gap < 10*time.Second || gap > 10500*time.Millisecond {
				t.Errorf("lease %s: %v between renewals %d and %d, want 10 s to 10.4 s", name, gap, i, i+1)
			}
		}
	}
	if got := rec.count("get leases"); got != 5 {
		t.Errorf("lease GETs: got %d, want 5 (one per node, before creating it)", got)
	}
	snap := a.Snapshot()
	if want := uint64(rec.count("create leases") + rec.count("update leases")); snap.Renewals != want || snap.Failures != 0 || snap.Lapses != 0 {
		t.Errorf("stats: got %d renewals, %d failures, %d lapses; want %d (creates and updates), 0, 0", snap.Renewals, snap.Failures, snap.Lapses, want)
	}
}

func TestFirstRenewalsAreSpreadOverTheInterval(t *testing.T) {
	cs, clk := fake.NewClientset(), clocktesting.NewFakeClock(t0)
	rec := record(cs, clk)
	a := testAgent(t, 100, cs, clk)
	if err := a.WaitRegistered(context.Background()); err != nil {
		t.Fatal(err)
	}
	advance(t, a, clk, 10*time.Second, 500*time.Millisecond)
	var quarters [4]int
	for _, at := range rec.times("update leases") {
		quarters[min(int(at.Sub(t0)/(2500*time.Millisecond)), 3)]++
	}
	for i, n := range quarters {
		if n == 0 {
			t.Errorf("no first renewal in quarter %d of the interval: %v", i, quarters)
		}
	}
	if got := rec.count("update leases"); got != 100 {
		t.Errorf("renewals in the first interval: got %d, want 100 (one per node)", got)
	}
}

// A renewal refused with 409 (someone else wrote the Lease) reads the
// Lease once and renews from it.
func TestAConflictMakesTheAgentRereadTheLeaseAndRenew(t *testing.T) {
	cs, clk := fake.NewClientset(), clocktesting.NewFakeClock(t0)
	rec := record(cs, clk)
	conflicts := 1
	cs.PrependReactor("update", "leases", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
		if conflicts > 0 { // reactors run one at a time
			conflicts--
			return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "node-0", errors.New("the object has been modified"))
		}
		return false, nil, nil
	})
	a := testAgent(t, 1, cs, clk)
	if err := a.WaitRegistered(context.Background()); err != nil {
		t.Fatal(err)
	}
	advance(t, a, clk, 11*time.Second, time.Second)
	if got := rec.count("get leases"); got != 2 {
		t.Errorf("lease GETs: got %d, want 2 (before creating it, and after the 409)", got)
	}
	if rt := getLease(t, cs, "node-0").Spec.RenewTime.Time; rt.Equal(t0) {
		t.Errorf("lease not renewed after the conflict: renewTime still %v", rt)
	}
	if snap := a.Snapshot(); snap.Conflicts != 1 || snap.Failures != 0 {
		t.Errorf("stats: got %d conflicts, %d failures; want 1, 0", snap.Conflicts, snap.Failures)
	}
}

// Upstream's lease controller retries after 200 ms, doubling to 7 s.
func TestFailuresAreRetriedWithBackoffFrom200msTo7s(t *testing.T) {
	cs, clk := fake.NewClientset(), clocktesting.NewFakeClock(t0)
	cs.PrependReactor("create", "nodes", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("apiserver is down")
	})
	rec := record(cs, clk)
	a := testAgent(t, 1, cs, clk)
	advance(t, a, clk, 30*time.Second, 100*time.Millisecond)
	attempts := rec.times("create nodes")
	want := []time.Duration{200, 400, 800, 1600, 3200, 6400, 7000, 7000}
	if len(attempts) < len(want)+1 {
		t.Fatalf("got %d attempts in 30 s, want at least %d", len(attempts), len(want)+1)
	}
	for i, w := range want {
		if got := attempts[i+1].Sub(attempts[i]); got != w*time.Millisecond {
			t.Errorf("gap before attempt %d: got %v, want %v", i+2, got, w*time.Millisecond)
		}
	}
}

// A node whose stored Ready condition someone else changed (the lifecycle
// controller, after missed heartbeats) posts its status again at once.
func TestANodeMarkedUnknownBySomeoneElsePostsReadyAgain(t *testing.T) {
	cs, clk := fake.NewClientset(), clocktesting.NewFakeClock(t0)
	a := testAgent(t, 1, cs, clk)
	if err := a.WaitRegistered(context.Background()); err != nil {
		t.Fatal(err)
	}
	settle(t, a, clk)
	node := getNode(t, cs, "node-0")
	ready := conditionOf(&node.Status, corev1.NodeReady)
	ready.Status, ready.Reason = corev1.ConditionUnknown, ReasonNodeStatusUnknown
	if _, err := cs.CoreV1().Nodes().UpdateStatus(context.Background(), node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// No clock step: the node is due at once.
	waitFor(t, "the node to report Ready again", func() bool {
		c := conditionOf(&getNode(t, cs, "node-0").Status, corev1.NodeReady)
		return c.Status == corev1.ConditionTrue
	})
}

func TestARestartedAgentAdoptsItsExistingNodeAndReportsReady(t *testing.T) {
	old := newNode("node-0", 0, t0.Add(-time.Hour))
	ready := conditionOf(&old.Status, corev1.NodeReady)
	ready.Status, ready.Reason = corev1.ConditionUnknown, ReasonNodeStatusUnknown
	cs, clk := fake.NewClientset(old), clocktesting.NewFakeClock(t0)
	a := testAgent(t, 1, cs, clk)
	if err := a.WaitRegistered(context.Background()); err != nil {
		t.Fatal(err)
	}
	settle(t, a, clk)
	c := conditionOf(&getNode(t, cs, "node-0").Status, corev1.NodeReady)
	if c.Status != corev1.ConditionTrue || !c.LastHeartbeatTime.Time.Equal(t0) || !c.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("Ready after the restart: got %+v, want True with heartbeat and transition at %v", c, t0)
	}
}

// A stopped agent leaves nothing running: its schedule, workers and
// informer have all returned when Stop does.
func TestAStoppedAgentLeavesNoGoroutinesBehind(t *testing.T) {
	before := runtime.NumGoroutine()
	cs, clk := fake.NewClientset(), clocktesting.NewFakeClock(t0)
	cfg := NewAgentConfig()
	cfg.Nodes, cfg.Workers, cfg.Clock = 50, 8, clk
	a, err := NewAgent(cfg, cs)
	if err != nil {
		t.Fatal(err)
	}
	a.Start()
	if err := a.WaitRegistered(context.Background()); err != nil {
		t.Fatal(err)
	}
	if during := runtime.NumGoroutine(); during < before+cfg.Workers {
		t.Fatalf("goroutines while running: got %d, want at least %d", during, before+cfg.Workers)
	}
	a.Stop()
	// Goroutines of the fake clientset's watches end asynchronously.
	waitFor(t, "goroutines to return to their number before Start", func() bool { return runtime.NumGoroutine() <= before })
}
