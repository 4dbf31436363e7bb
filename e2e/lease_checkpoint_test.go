package e2e

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/controlplane"
	"minicp/e2e/framework"
	"minicp/lease"
)

// checkpointStack starts minicp on three etcd members with the given
// lease-checkpoint settings.
func checkpointStack(t *testing.T, checkpoint bool, interval time.Duration, configure func(*controlplane.Config)) *framework.Stack {
	return framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.Etcd.Members = 3
		c.Etcd.EnableLeaseCheckpoint = checkpoint
		c.Etcd.LeaseCheckpointInterval = interval
		if configure != nil {
			configure(c)
		}
	}})
}

// moveLeaderAway hands etcd leadership to a follower.
func moveLeaderAway(ctx context.Context, t *testing.T, s *framework.Stack) {
	t.Helper()
	cluster := s.ControlPlane.EtcdCluster()
	for _, m := range cluster.Status().Members {
		if !m.IsLeader {
			if err := cluster.MoveLeader(ctx, m.Name); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatal("no follower to move the leader to")
}

func remainingTTL(ctx context.Context, t *testing.T, c *clientv3.Client, id clientv3.LeaseID) int64 {
	t.Helper()
	resp, err := c.TimeToLive(ctx, id)
	if err != nil {
		t.Fatalf("TimeToLive(%x): %v", id, err)
	}
	return resp.TTL
}

// keyLeaseID returns the etcd lease a key is bound to.
func keyLeaseID(ctx context.Context, t *testing.T, c *clientv3.Client, key string) clientv3.LeaseID {
	t.Helper()
	resp, err := c.Get(ctx, key)
	if err != nil || len(resp.Kvs) != 1 || resp.Kvs[0].Lease == 0 {
		t.Fatalf("key %s: %v, %v; want one key bound to an etcd lease", key, resp, err)
	}
	return clientv3.LeaseID(resp.Kvs[0].Lease)
}

// M13: KeepAlive is not a Raft write, so a new etcd
// leader restarts every lease's countdown from its full TTL, unless the old
// leader checkpointed the remaining TTL. Checkpoints only cover leases
// whose remaining TTL exceeds the checkpoint interval: at etcd's fixed 5
// minutes, a 40 s Node Lease never is, checkpointing on or not.
func TestALeaderChangeResetsLeaseTTLsUnlessCheckpointed(t *testing.T) {
	if testing.Short() {
		t.Skip("ages leases on three 3-member clusters for 6 s")
	}
	cases := []struct {
		name           string
		checkpoint     bool
		interval       time.Duration
		resetEtcdLease bool // the 30 s lease granted directly
		resetNodeLease bool // the 40 s lease behind a Node Lease
	}{
		{"checkpointing off: both reset", false, time.Second, true, true},
		{"checkpointing on every second: both carried over", true, time.Second, false, false},
		{"checkpointing on at etcd's 5 minutes: both reset", true, 5 * time.Minute, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := checkpointStack(t, tc.checkpoint, tc.interval, nil)
			ctx := framework.Context(t, 60*time.Second)
			granted, err := s.Etcd.Grant(ctx, 30)
			if err != nil {
				t.Fatal(err)
			}
			seconds, holder := int32(40), "worker-0"
			nl := &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: "worker-0"},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds,
					RenewTime: &metav1.MicroTime{Time: time.Now()}},
			}
			if _, err := s.Clientset.CoordinationV1().Leases(lease.NodeLeaseNamespace).Create(ctx, nl, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			nodeLease := keyLeaseID(ctx, t, s.Etcd, "/registry/leases/kube-node-lease/worker-0")

			framework.Eventually(t, 10*time.Second, "6 s to pass on the 30 s lease", func() bool {
				return remainingTTL(ctx, t, s.Etcd, granted.ID) <= 24
			})
			etcdBefore, nodeBefore := remainingTTL(ctx, t, s.Etcd, granted.ID), remainingTTL(ctx, t, s.Etcd, nodeLease)
			moveLeaderAway(ctx, t, s)
			etcdAfter, nodeAfter := remainingTTL(ctx, t, s.Etcd, granted.ID), remainingTTL(ctx, t, s.Etcd, nodeLease)
			t.Logf("30 s etcd lease: %d s left before the leader moved, %d s after; 40 s Node Lease: %d s before, %d s after",
				etcdBefore, etcdAfter, nodeBefore, nodeAfter)
			checkTTL(t, "30 s etcd lease", etcdAfter, etcdBefore, 30, tc.resetEtcdLease)
			checkTTL(t, "40 s Node Lease's etcd lease", nodeAfter, nodeBefore, 40, tc.resetNodeLease)
		})
	}
}

// checkTTL checks a TTL after a leader change: back near full when reset,
// near what was left before when carried over. A carried-over TTL may be up
// to 3 s above: the last checkpoint can be the interval plus the lessor's
// half-second loop old, etcd rounds both the checkpointed and the reported
// TTL up to whole seconds, and the new leader adds an election timeout.
func checkTTL(t *testing.T, what string, after, before, full int64, reset bool) {
	t.Helper()
	if reset && after < full-2 {
		t.Errorf("%s: %d s left after the leader moved, want it reset to about %d", what, after, full)
	}
	if !reset && (after > before+3 || after < before-2) {
		t.Errorf("%s: %d s left after the leader moved, want about the %d left before", what, after, before)
	}
}

// M12, M13: a dead node's Lease key is deleted when its
// etcd lease runs out. A leader change in between restarts the countdown
// unless it was checkpointed, so the key outlives the node by up to a
// whole extra TTL.
func TestADeadNodesLeaseKeyOutlivesALeaderChangeUnlessCheckpointed(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for 10 s leases to run out on two 3-member clusters")
	}
	const duration, moveAfter = 10 * time.Second, 5 * time.Second
	cases := []struct {
		name       string
		checkpoint bool
		min, max   time.Duration // last heartbeat to DELETED
	}{
		{"checkpointing off: TTL restarts at the move", false, moveAfter + duration, moveAfter + duration + 2*time.Second},
		// A carried-over TTL may be up to 3 s above the true one (see checkTTL).
		{"checkpointing on every second: TTL carried over", true, duration - time.Second, duration + 3*time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := checkpointStack(t, tc.checkpoint, time.Second, func(c *controlplane.Config) {
				c.Nodes.LifecycleController = true
				c.Nodes.Controller.GracePeriod = time.Minute // only the key's deletion marks the node
				c.Nodes.Controller.MonitorPeriod = monitorPeriod
			})
			ctx := framework.Context(t, 60*time.Second)
			agent := startAgent(t, s, 1, "worker-", duration)
			key := "/registry/leases/kube-node-lease/worker-0"
			id := keyLeaseID(ctx, t, s.Etcd, key)

			agent.Stop()
			last := lastHeartbeat(t, s, "worker-0")
			get, err := s.Etcd.Get(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			framework.Eventually(t, 2*duration, "the leader move time", func() bool { return time.Since(last) >= moveAfter })
			before := remainingTTL(ctx, t, s.Etcd, id)
			moveLeaderAway(ctx, t, s)
			after := remainingTTL(ctx, t, s.Etcd, id)
			deleted := watchDelete(ctx, t, s.Etcd, key, get.Header.Revision)
			_, marked := waitReady(t, s, "worker-0", corev1.ConditionUnknown, 5*time.Second)
			t.Logf("TTL %d s before the leader moved, %d s after; last heartbeat to DELETED %v, to Ready=Unknown %v",
				before, after, deleted.Sub(last).Round(10*time.Millisecond), marked.Sub(last).Round(10*time.Millisecond))
			if d := deleted.Sub(last); d < tc.min || d > tc.max {
				t.Errorf("last heartbeat to DELETED: %v, want %v to %v", d, tc.min, tc.max)
			}
		})
	}
}
