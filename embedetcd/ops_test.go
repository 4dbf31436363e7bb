package embedetcd

import (
	"errors"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"minicp/internal/testsupport"
)

// startThree starts a 3-member cluster on free ports with fast elections.
func startThree(t *testing.T) *Cluster {
	t.Helper()
	cfg := testConfig(t)
	cfg.Members = 3
	cfg.TickMs, cfg.ElectionMs = 10, 100
	return startCluster(t, cfg)
}

// eventually polls cond until it holds or 30 s have passed.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testsupport.Eventually(t, 30*time.Second, what, cond)
}

func TestStatusReportsMembersLeaderTermRevisionsAndSizes(t *testing.T) {
	c := startThree(t)
	ctx := testContext(t)
	var last *clientv3.PutResponse
	for i := range 5 {
		var err error
		if last, err = c.Client().Put(ctx, fmt.Sprintf("k%d", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Client().Compact(ctx, last.Header.Revision-2, clientv3.WithCompactPhysical()); err != nil {
		t.Fatalf("Compact: %v", err)
	}

	// Followers apply the compaction a moment after the leader.
	var st Status
	eventually(t, "every member to apply the last write and the compaction", func() bool {
		st = c.Status()
		for _, m := range st.Members {
			if m.Revision != last.Header.Revision || m.CompactRevision != last.Header.Revision-2 {
				return false
			}
		}
		return true
	})
	if len(st.Members) != 3 {
		t.Fatalf("got %d members, want 3", len(st.Members))
	}
	leaders := 0
	for _, m := range st.Members {
		if !m.Running || m.ID == 0 || m.RaftTerm == 0 || m.RaftIndex == 0 || m.DBSize <= 0 || m.DBSizeInUse <= 0 {
			t.Errorf("member %s: got %+v, want running with an ID, a term, an index and sizes", m.Name, m)
		}
		if m.IsLeader {
			leaders++
			if st.Leader != m.Name {
				t.Errorf("cluster leader: got %q, want %q", st.Leader, m.Name)
			}
		}
	}
	if leaders != 1 {
		t.Errorf("got %d members reporting themselves leader, want 1", leaders)
	}
	if len(st.Alarms) != 0 {
		t.Errorf("alarms: got %v, want none", st.Alarms)
	}
}

// M13 relies on this: move-leader makes another member
// leader in a new term.
func TestMoveLeaderMakesTheNamedMemberLeaderInANewTerm(t *testing.T) {
	c := startThree(t)
	ctx := testContext(t)
	before := c.Status()
	var target string
	for _, m := range before.Members {
		if !m.IsLeader {
			target = m.Name
			break
		}
	}
	if err := c.MoveLeader(ctx, target); err != nil {
		t.Fatalf("MoveLeader(%s): %v", target, err)
	}
	after := c.Status()
	if after.Leader != target {
		t.Fatalf("leader after the move: got %q, want %q", after.Leader, target)
	}
	// A member learns the new term when it applies the new leader's first
	// entry, which may be a moment after it follows the new leader.
	eventually(t, fmt.Sprintf("raft term above %d after the move", before.Members[0].RaftTerm), func() bool {
		return c.Status().Members[0].RaftTerm > before.Members[0].RaftTerm
	})
	if err := c.MoveLeader(ctx, "no-such-member"); !errors.Is(err, ErrNoSuchMember) {
		t.Errorf("MoveLeader to an unknown member: got %v, want ErrNoSuchMember", err)
	}
}

func TestAStoppedMemberRestartsOnItsDataAndCatchesUp(t *testing.T) {
	c := startThree(t)
	ctx := testContext(t)
	if _, err := c.Client().Put(ctx, "before", "stop"); err != nil {
		t.Fatal(err)
	}
	victim := c.Leader() // stopping the leader forces an election as well
	if err := c.StopMember(victim.Name()); err != nil {
		t.Fatalf("StopMember: %v", err)
	}
	if victim.Running() {
		t.Fatal("the stopped member reports itself running")
	}
	if err := c.StopMember(victim.Name()); err == nil {
		t.Error("stopping a stopped member: got no error")
	}

	// Two of three members keep a quorum: they elect a leader and writes go
	// on. (A write sent before the election is lost with the old leader and
	// fails after etcd's request timeout, as in any etcd cluster.)
	eventually(t, "a new leader", func() bool {
		l := c.Leader()
		return l != nil && l.Name() != victim.Name() && c.Status().Leader == l.Name()
	})
	put, err := c.Client().Put(ctx, "while", "stopped")
	if err != nil {
		t.Fatalf("Put with one member down: %v", err)
	}
	st := c.Status()
	if st.Leader == victim.Name() || st.Leader == "" {
		t.Errorf("leader with %s stopped: got %q, want another member", victim.Name(), st.Leader)
	}
	for _, m := range st.Members {
		if m.Name == victim.Name() && m.Running {
			t.Errorf("status of the stopped member: got running")
		}
	}

	if err := c.RestartMember(ctx, victim.Name()); err != nil {
		t.Fatalf("RestartMember: %v", err)
	}
	restarted, err := c.Member(victim.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !restarted.Running() || restarted.ClientURL() != victim.ClientURL() || restarted.ID() != victim.ID() {
		t.Fatalf("restarted member: running %v at %s with ID %x, want running at %s with ID %x",
			restarted.Running(), restarted.ClientURL(), restarted.ID(), victim.ClientURL(), victim.ID())
	}
	// Read from the restarted member alone, without going to the leader.
	direct, err := clientv3.New(clientv3.Config{Endpoints: []string{restarted.ClientURL()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	eventually(t, "the restarted member to catch up", func() bool {
		resp, err := direct.Get(ctx, "while", clientv3.WithSerializable())
		return err == nil && len(resp.Kvs) == 1 && resp.Kvs[0].ModRevision == put.Header.Revision
	})
	resp, err := direct.Get(ctx, "before", clientv3.WithSerializable())
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("key written before the stop, read from the restarted member: %v, %v", resp, err)
	}
}
