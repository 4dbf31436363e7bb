package embedetcd

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/features"
)

func TestLeaseCheckpointIntervalReachesTheServer(t *testing.T) {
	cfg := testConfig(t)
	cfg.EnableLeaseCheckpoint = true
	cfg.LeaseCheckpointInterval = 1500 * time.Millisecond
	c := startCluster(t, cfg)
	got := c.Members()[0].Server().Cfg
	enabled := got.ServerFeatureGate.Enabled(features.LeaseCheckpoint)
	if got.LeaseCheckpointInterval != cfg.LeaseCheckpointInterval || !enabled {
		t.Fatalf("server config: got interval %s, feature gate LeaseCheckpoint %v; want %s, true",
			got.LeaseCheckpointInterval, enabled, cfg.LeaseCheckpointInterval)
	}
}

// M13: KeepAlive is not a Raft write, so a new leader
// restarts every lease's countdown from its full TTL, unless the old leader
// checkpointed the remaining TTL through Raft. etcd only checkpoints leases
// whose remaining TTL exceeds the checkpoint interval, which embed fixes at
// 5 minutes: checkpointing on alone does nothing for a 30 s lease.
func TestLeaderChangeResetsLeaseTTLUnlessCheckpointed(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three 3-member clusters and waits for leases to age")
	}
	const ttl, aged = 30, 23 // grant 30 s, move the leader once 23 s remain
	cases := []struct {
		name       string
		checkpoint bool
		interval   time.Duration
		carryOver  bool
	}{
		{"without checkpoints the TTL restarts from 30 s", false, time.Second, false},
		{"with 1 s checkpoints the TTL carries over", true, time.Second, true},
		{"with checkpoints at etcd's 5 minutes a 30 s lease is never checkpointed", true, 5 * time.Minute, false},
	}
	// All clusters age their lease at the same time, so the test waits once.
	ctx := testContext(t)
	clusters := make([]*Cluster, len(cases))
	leases := make([]clientv3.LeaseID, len(cases))
	for i, tc := range cases {
		cfg := testConfig(t)
		cfg.Members = 3
		cfg.EnableLeaseCheckpoint = tc.checkpoint
		cfg.LeaseCheckpointInterval = tc.interval
		clusters[i] = startCluster(t, cfg)
		lease, err := clusters[i].Client().Grant(ctx, ttl)
		if err != nil {
			t.Fatalf("Grant: %v", err)
		}
		leases[i] = lease.ID
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := clusters[i]
			before := waitForTTL(ctx, t, c.Client(), leases[i], aged)
			moveLeader(ctx, t, c)
			after, err := c.Client().TimeToLive(ctx, leases[i])
			if err != nil {
				t.Fatalf("TimeToLive after the leader moved: %v", err)
			}
			t.Logf("remaining TTL: %d s before the move, %d s after", before, after.TTL)
			// The new leader adds an election timeout of grace, and the last
			// checkpoint may be a second old: allow 3 s above the TTL seen.
			if tc.carryOver && after.TTL > before+3 {
				t.Errorf("TTL after the move: got %d, want at most %d (about the %d left before it)", after.TTL, before+3, before)
			}
			if !tc.carryOver && after.TTL < ttl-2 {
				t.Errorf("TTL after the move: got %d, want at least %d (reset to the full %d)", after.TTL, ttl-2, ttl)
			}
		})
	}
}

// waitForTTL polls the lease until at most remaining seconds are left and
// returns the TTL it saw last.
func waitForTTL(ctx context.Context, t *testing.T, cli *clientv3.Client, id clientv3.LeaseID, remaining int64) int64 {
	t.Helper()
	for {
		resp, err := cli.TimeToLive(ctx, id)
		if err != nil {
			t.Fatalf("TimeToLive: %v", err)
		}
		if resp.TTL <= remaining {
			return resp.TTL
		}
		select {
		case <-ctx.Done():
			t.Fatalf("lease still has %d s left, want at most %d: %v", resp.TTL, remaining, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// moveLeader hands leadership from the current leader to another member
// and waits until every member follows the new one.
func moveLeader(ctx context.Context, t *testing.T, c *Cluster) {
	t.Helper()
	for _, m := range c.Status().Members {
		if !m.IsLeader {
			if err := c.MoveLeader(ctx, m.Name); err != nil {
				t.Fatal(err)
			}
			if got := c.Status().Leader; got != m.Name {
				t.Fatalf("leader after the move: got %q, want %q", got, m.Name)
			}
			return
		}
	}
	t.Fatal("no follower to move the leader to")
}
