package e2e

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"minicp/controlplane"
	"minicp/e2e/framework"
	"minicp/lease"
)

// nodeStack starts minicp with the node lifecycle controller at the given
// grace period, checking nodes every 250 ms, and no in-process nodes.
func nodeStack(t *testing.T, grace time.Duration, binding bool) *framework.Stack {
	return framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.Nodes.LifecycleController = true
		c.Nodes.Controller.GracePeriod = grace
		c.Nodes.Controller.MonitorPeriod = monitorPeriod
		c.Nodes.LeaseEtcdBinding = binding
	}})
}

const monitorPeriod = 250 * time.Millisecond

// startAgent runs a kubelet-sim-like agent for the named nodes' prefix
// against s, and returns it running; the caller stops it (and t.Cleanup
// does, if the test ends first).
func startAgent(t *testing.T, s *framework.Stack, nodes int, prefix string, duration time.Duration) *lease.Agent {
	t.Helper()
	cfg := lease.NewAgentConfig()
	cfg.Nodes, cfg.NodePrefix, cfg.LeaseDuration, cfg.Workers = nodes, prefix, duration, 8
	cs, closeIdle, err := lease.NewClientset(s.RESTConfig, cfg.Workers)
	if err != nil {
		t.Fatal(err)
	}
	a, err := lease.NewAgent(cfg, cs)
	if err != nil {
		t.Fatal(err)
	}
	a.Start()
	t.Cleanup(func() { a.Stop(); closeIdle() })
	if err := a.WaitRegistered(framework.Context(t, 20*time.Second)); err != nil {
		t.Fatal(err)
	}
	return a
}

// lastHeartbeat returns the renewTime of a stopped node's Lease: the time
// of its last heartbeat.
func lastHeartbeat(t *testing.T, s *framework.Stack, name string) time.Time {
	t.Helper()
	l, err := s.Clientset.CoordinationV1().Leases(lease.NodeLeaseNamespace).Get(framework.Context(t, 10*time.Second), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Spec.RenewTime.Time
}

func getNodeE2E(t *testing.T, s *framework.Stack, name string) *corev1.Node {
	t.Helper()
	n, err := s.Clientset.CoreV1().Nodes().Get(framework.Context(t, 10*time.Second), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func readyCondition(n *corev1.Node) corev1.NodeCondition {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c
		}
	}
	return corev1.NodeCondition{}
}

func taintKeys(n *corev1.Node) map[string]bool {
	keys := map[string]bool{}
	for _, t := range n.Spec.Taints {
		keys[t.Key+":"+string(t.Effect)] = true
	}
	return keys
}

// seenWindow brackets when a change was written, as a poll sees it: after
// the start of the last poll that did not see it yet, and by the return of
// the first one that did. A bound checked against the right end of the
// window leaves out the poll's own latency, which a loaded machine can
// stretch to hundreds of milliseconds.
type seenWindow struct{ after, by time.Time }

// waitReady polls the node until its Ready condition has the given status
// and returns it with when the change was written, as the polls bracket it
// (the condition's own lastTransitionTime has whole seconds only).
func waitReady(t *testing.T, s *framework.Stack, name string, status corev1.ConditionStatus, timeout time.Duration) (*corev1.Node, seenWindow) {
	t.Helper()
	var node *corev1.Node
	var seen seenWindow
	framework.Eventually(t, timeout, "node "+name+" Ready="+string(status), func() bool {
		start := time.Now()
		node = getNodeE2E(t, s, name)
		if readyCondition(node).Status != status {
			seen.after = start
			return false
		}
		return true
	})
	seen.by = time.Now()
	return node, seen
}

// M11: a node whose kubelet stops goes Ready=Unknown with
// upstream's reason once its Lease has not been renewed for the grace
// period, gets the unreachable taints, and is Ready without them once its
// kubelet is back. Upstream's Node Lease keys are plain (no etcd binding),
// so the grace period is the only signal here.
func TestANodeWhoseAgentStopsGoesUnknownAndTaintedThenReadyAgain(t *testing.T) {
	const grace = 3 * time.Second
	s := nodeStack(t, grace, false)
	agent := startAgent(t, s, 1, "worker-", 4*time.Second) // renewed every second
	_, _ = waitReady(t, s, "worker-0", corev1.ConditionTrue, 10*time.Second)
	managersBefore := managersOf(getNodeE2E(t, s, "worker-0").ManagedFields)
	if len(managersBefore) == 0 {
		t.Fatal("the registered node has no managedFields")
	}
	arrival := watchRenewals(t, s, "worker-0")

	agent.Stop()
	last := lastHeartbeat(t, s, "worker-0")
	written := arrival(last)
	node, seen := waitReady(t, s, "worker-0", corev1.ConditionUnknown, 3*grace)
	ready := readyCondition(node)
	t.Logf("last heartbeat to Ready=Unknown: %v to %v; its write seen %v after it (grace period %v, monitor period %v)",
		seen.after.Sub(last), seen.by.Sub(last), written.Sub(last), grace, monitorPeriod)
	if ready.Reason != "NodeStatusUnknown" || ready.Message != "Kubelet stopped posting node status." {
		t.Errorf("Ready: got reason %q message %q, want NodeStatusUnknown %q", ready.Reason, ready.Message, "Kubelet stopped posting node status.")
	}
	// The node cannot go before the grace period has passed since the
	// renewTime its last renewal wrote. The controller sees that renewal
	// at its first pass after the write reaches it (up to one monitor
	// period late) and declares the node silent at the first pass after
	// the grace period (up to one more): the upper bound counts from when
	// the test's own watch saw the write, as a renewal can reach the
	// apiserver seconds after its renewTime on a loaded machine. 1.5 s
	// more covers the controller's informer, a late pass and the status
	// write there (3.87 s from the renewTime was seen at a load of 25):
	// the bound still fails a controller that waits for twice the grace
	// period or ignores renewals after the first (that would be early).
	if latest := grace + 2*monitorPeriod + 1500*time.Millisecond; seen.by.Sub(last) < grace || seen.after.Sub(written) > latest {
		t.Errorf("detected %v to %v after the last heartbeat (%v after its write was seen), want at least the grace period %v, and at most %v after the write",
			seen.after.Sub(last), seen.by.Sub(last), seen.after.Sub(written), grace, latest)
	}
	framework.Eventually(t, framework.StateTimeout, "the unreachable taints", func() bool {
		keys := taintKeys(getNodeE2E(t, s, "worker-0"))
		return keys["node.kubernetes.io/unreachable:NoSchedule"] && keys["node.kubernetes.io/unreachable:NoExecute"]
	})
	// The controller writes the taints back from its informer's copy,
	// which has no managedFields (trimmed, as kube-controller-manager
	// trims them): the stored entries are kept, and the taints get one.
	tainted := getNodeE2E(t, s, "worker-0")
	managersAfter := managersOf(tainted.ManagedFields)
	for m := range managersBefore {
		if !managersAfter[m] {
			t.Errorf("manager %q lost its managedFields entry when the controller tainted the node: %v", m, managersAfter)
		}
	}
	if !slices.ContainsFunc(tainted.ManagedFields, func(e metav1.ManagedFieldsEntry) bool { return owns(e, "f:taints") }) {
		t.Errorf("no managedFields entry owns the taints: %+v", tainted.ManagedFields)
	}

	startAgent(t, s, 1, "worker-", 4*time.Second)
	_, _ = waitReady(t, s, "worker-0", corev1.ConditionTrue, 10*time.Second)
	framework.Eventually(t, framework.StateTimeout, "the taints to go", func() bool {
		return len(getNodeE2E(t, s, "worker-0").Spec.Taints) == 0
	})
}

// watchRenewals watches the Lease of node name and returns a function
// that waits for the renewal that wrote renewTime rt to be seen, and
// returns when it was.
func watchRenewals(t *testing.T, s *framework.Stack, name string) func(rt time.Time) time.Time {
	t.Helper()
	w, err := s.Clientset.CoordinationV1().Leases(lease.NodeLeaseNamespace).Watch(framework.Context(t, time.Minute),
		metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	var mu sync.Mutex             // guards seen
	seen := map[int64]time.Time{} // renewTime (µs) -> when its event came
	go func() {                   // reads the watch until the test stops it
		for ev := range w.ResultChan() {
			if l, ok := ev.Object.(*coordinationv1.Lease); ok && l.Spec.RenewTime != nil {
				mu.Lock()
				if _, dup := seen[l.Spec.RenewTime.UnixMicro()]; !dup {
					seen[l.Spec.RenewTime.UnixMicro()] = time.Now()
				}
				mu.Unlock()
			}
		}
	}()
	return func(rt time.Time) time.Time {
		t.Helper()
		var at time.Time
		framework.Eventually(t, framework.StateTimeout, "the watch to see the renewal of "+rt.String(), func() bool {
			mu.Lock()
			defer mu.Unlock()
			var ok bool
			at, ok = seen[rt.UnixMicro()]
			return ok
		})
		return at
	}
}

// M12: with minicp's etcd binding, a dead node's Lease
// key is deleted by etcd when its TTL (leaseDurationSeconds) runs out after
// the last renewal; watchers see DELETED, and the controller marks the node
// long before its grace period would.
func TestADeadNodesLeaseKeyIsDeletedByEtcdAfterItsTTL(t *testing.T) {
	const grace, duration = 30 * time.Second, 2 * time.Second
	s := nodeStack(t, grace, true)
	agent := startAgent(t, s, 1, "worker-", duration)
	key := "/registry/leases/kube-node-lease/worker-0"
	ctx := framework.Context(t, framework.StateTimeout)
	get, err := s.Etcd.Get(ctx, key)
	if err != nil || len(get.Kvs) != 1 || get.Kvs[0].Lease == 0 {
		t.Fatalf("node lease key: %v, %v; want one key bound to an etcd lease", get, err)
	}

	id := clientv3.LeaseID(get.Kvs[0].Lease)
	if ttl, err := s.Etcd.TimeToLive(ctx, id); err != nil || ttl.GrantedTTL != int64(duration/time.Second) {
		t.Fatalf("the key's etcd lease: %v, %v; want one granted leaseDurationSeconds, %v", ttl, err, duration)
	}

	agent.Stop()
	last := lastHeartbeat(t, s, "worker-0")
	asked := time.Now()
	ttl, err := s.Etcd.TimeToLive(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	answered, left := time.Now(), max(ttl.TTL, 0) // -1: run out already
	deleted := watchDelete(ctx, t, s.Etcd, key, get.Header.Revision)
	_, marked := waitReady(t, s, "worker-0", corev1.ConditionUnknown, grace/2)
	t.Logf("last heartbeat to DELETED: %v (TTL %v, %d s left %v after it); to Ready=Unknown: %v to %v (grace period %v)",
		deleted.Sub(last), duration, left, asked.Sub(last), marked.after.Sub(last), marked.by.Sub(last), grace)
	// The countdown restarts at the last renewal, which comes after the
	// renewTime it writes: the key cannot go before a TTL past it. It goes
	// once the countdown etcd reports runs out (etcd cuts the seconds
	// left to a whole number, so up to 1 s more), and etcd's lessor looks
	// for expired leases every 500 ms; 1 s more covers that, the revoke's
	// Raft write and the watch on a loaded machine. The bound is measured
	// from etcd's own countdown, not from the renewTime, so the renewal's
	// way to etcd is not in it; a lease granted longer fails the check
	// before the stop.
	latest := answered.Add(time.Duration(left)*time.Second + 2*time.Second)
	if d := deleted.Sub(last); d < duration || deleted.After(latest) {
		t.Errorf("key deleted %v after the last heartbeat and %v after etcd reported %d s left, want no sooner than the TTL %v and at most 2 s past the countdown",
			d, deleted.Sub(answered), left, duration)
	}
	// The controller reacts to the deletion at its next pass; 1 s more
	// covers the informer's delivery and the status write on a loaded
	// machine, far below the 30 s grace period that would mark it
	// otherwise.
	if d := marked.after.Sub(deleted); d > monitorPeriod+time.Second {
		t.Errorf("node marked %v after its lease key was deleted, want within a monitor period", d)
	}
}

// watchDelete waits for the DELETE of key after revision rev and returns
// when it arrived.
func watchDelete(ctx context.Context, t *testing.T, c *clientv3.Client, key string, rev int64) time.Time {
	t.Helper()
	for resp := range c.Watch(ctx, key, clientv3.WithRev(rev+1)) {
		if err := resp.Err(); err != nil {
			t.Fatalf("watching %s: %v", key, err)
		}
		for _, ev := range resp.Events {
			if ev.Type == clientv3.EventTypeDelete {
				return time.Now()
			}
		}
	}
	t.Fatalf("watch of %s ended without a DELETE: %v", key, ctx.Err())
	return time.Time{}
}

// Heartbeats stay correct when someone else writes the Lease too: the
// agent answers each 409 with one read, keeps renewing on time, and keeps
// what the other writer wrote. A writer a hundred times a second can
// still win five races in a row against one renewal, which then gives up
// and is retried after a 200 ms backoff, as upstream's kubelet does
// (maxUpdateRetries): such a failure is allowed; what must hold is that
// no Lease lapses and no renewal waits for the next one's turn.
func TestRenewalsStayOnTimeUnderConflictsFromAnotherWriter(t *testing.T) {
	// An 8 s Lease is renewed every 2 s (plus up to 4% jitter), long
	// beside the delays a loaded machine adds to a renewal.
	const duration, interval = 8 * time.Second, 2 * time.Second
	s := nodeStack(t, time.Minute, false)
	agent := startAgent(t, s, 1, "worker-", duration)
	leases := s.Clientset.CoordinationV1().Leases(lease.NodeLeaseNamespace)
	ctx := framework.Context(t, 60*time.Second)

	w, err := leases.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=worker-0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	stop := time.Now().Add(3 * interval)
	writes := 0
	for time.Now().Before(stop) { // another writer, a hundred times a second
		l, err := leases.Get(ctx, "worker-0", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if l.Annotations == nil {
			l.Annotations = map[string]string{}
		}
		l.Annotations["example.com/writes"] = time.Now().Format(time.RFC3339Nano)
		if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err == nil {
			writes++
		}
		time.Sleep(10 * time.Millisecond) // pacing the writer, not waiting for a condition
	}

	snap := agent.Snapshot()
	t.Logf("other writer: %d writes; agent: %d renewals, %d conflicts, %d failures, %d lapses", writes, snap.Renewals, snap.Conflicts, snap.Failures, snap.Lapses)
	if snap.Conflicts == 0 || snap.Lapses != 0 || snap.Renewals == 0 {
		t.Errorf("agent: got %d renewals, %d conflicts, %d lapses; want renewals, some conflicts and no lapse", snap.Renewals, snap.Conflicts, snap.Lapses)
	}
	// renewTime is when a renewal began. The next begins an interval
	// (and jitter) later; one that gave up is retried 200 ms after it
	// began, or at once if its five attempts took longer. 3 s leaves the
	// retry and a loaded machine's scheduling most of a second, and stays
	// clear of the 4 s an agent would leave that, after a 409, waited for
	// the next renewal's turn.
	maxGap := renewalGap(t, w)
	t.Logf("longest gap between renewals: %v", maxGap)
	if maxGap > 3*time.Second {
		t.Errorf("longest gap between renewals: %v, want about the %v renewal interval", maxGap, interval)
	}
	final, err := leases.Get(ctx, "worker-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if final.Annotations["example.com/writes"] == "" || *final.Spec.HolderIdentity != "worker-0" {
		t.Errorf("lease after the conflicts: annotations %v, holder %q; want the other writer's annotation and holder worker-0", final.Annotations, *final.Spec.HolderIdentity)
	}
}

// renewalGap reads the watch's events so far and returns the longest time
// between two successive renewTimes.
func renewalGap(t *testing.T, w watch.Interface) time.Duration {
	t.Helper()
	var prev time.Time
	var gap time.Duration
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the lease watch ended early")
			}
			l, ok := ev.Object.(*coordinationv1.Lease)
			if !ok || l.Spec.RenewTime == nil || !l.Spec.RenewTime.After(prev) {
				continue
			}
			if !prev.IsZero() {
				gap = max(gap, l.Spec.RenewTime.Sub(prev))
			}
			prev = l.Spec.RenewTime.Time
		case <-time.After(300 * time.Millisecond): // caught up
			if prev.IsZero() {
				t.Fatal("the lease watch saw no renewal")
			}
			return gap
		}
	}
}

// A stopped agent leaves nothing running, on either side of the HTTP
// connection: its schedule, workers and informer return, and once its
// idle connections are closed the apiserver's goroutines for them end.
func TestAStoppedAgentLeavesNoGoroutinesRunning(t *testing.T) {
	// No garbage collector: its informers would come and go with the
	// agent's objects and blur the count.
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) { c.EnableGarbageCollector = false }})
	before := settledGoroutines()
	cfg := lease.NewAgentConfig()
	cfg.Nodes, cfg.NodePrefix, cfg.Workers = 100, "worker-", 16
	cs, closeIdle, err := lease.NewClientset(s.RESTConfig, cfg.Workers)
	if err != nil {
		t.Fatal(err)
	}
	a, err := lease.NewAgent(cfg, cs)
	if err != nil {
		t.Fatal(err)
	}
	a.Start()
	if err := a.WaitRegistered(framework.Context(t, framework.StateTimeout)); err != nil {
		t.Fatal(err)
	}
	during := runtime.NumGoroutine()
	a.Stop()
	closeIdle()
	// A leaking agent would keep its 16 workers, schedule and informer; a
	// slack of 5 absorbs the stack's own goroutines that come and go (HTTP
	// keep-alives, cache dispatch) on a loaded machine.
	const slack = 5
	var after int
	framework.Eventually(t, 20*time.Second, "goroutines back to their number before the agent", func() bool {
		after = runtime.NumGoroutine()
		return after <= before+slack
	})
	t.Logf("goroutines: %d before, %d with 100 nodes running, %d after Stop", before, during, after)
}

// M11: minicp's own simulated nodes are registered, Ready
// and heartbeating by the time Start returns, each with its Lease.
func TestSimulatedNodesAreReadyWhenMinicpIs(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.Nodes.Simulated = 3
		c.Nodes.LifecycleController = true
	}})
	ctx := framework.Context(t, 10*time.Second)
	nodes, err := s.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 3 {
		t.Fatalf("got %d nodes right after start, want 3", len(nodes.Items))
	}
	for _, n := range nodes.Items {
		if readyCondition(&n).Status != corev1.ConditionTrue {
			t.Errorf("node %s: Ready %q, want True", n.Name, readyCondition(&n).Status)
		}
		l, err := s.Clientset.CoordinationV1().Leases(lease.NodeLeaseNamespace).Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil || *l.Spec.LeaseDurationSeconds != 40 || *l.Spec.HolderIdentity != n.Name {
			t.Errorf("lease of %s: %v, %v; want one held by the node for 40 s", n.Name, l, err)
		}
	}
}

// settledGoroutines waits for the stack's own background goroutines
// (controllers and informers started after Start returns) to be up, i.e. for
// the goroutine count to hold still for half a second, and returns it.
func settledGoroutines() int {
	n, same := runtime.NumGoroutine(), 0
	for deadline := time.Now().Add(10 * time.Second); same < 5 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		if m := runtime.NumGoroutine(); m == n {
			same++
		} else {
			n, same = m, 0
		}
	}
	return n
}

// managersOf names the managers in entries.
func managersOf(entries []metav1.ManagedFieldsEntry) map[string]bool {
	out := map[string]bool{}
	for _, e := range entries {
		out[e.Manager] = true
	}
	return out
}
