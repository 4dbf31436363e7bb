package embedetcd

// Cluster operations for the labs: what `etcdctl endpoint status` shows,
// moving the leader, and stopping and restarting one member on its data.
// They read each member's etcd server in-process, so a stopped member is
// reported as such instead of as a timeout.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"go.etcd.io/etcd/client/pkg/v3/types"
)

// ErrNoSuchMember matches (with errors.Is) the error of an operation naming
// a member the cluster does not have.
var ErrNoSuchMember = errors.New("no such etcd member")

// MemberStatus is one member's state, the figures `etcdctl endpoint
// status` prints plus the compacted revision.
type MemberStatus struct {
	Name      string
	ID        uint64
	ClientURL string
	// Running is false for a member stopped with StopMember; the other
	// figures are then zero.
	Running  bool
	IsLeader bool
	// Leader is the member this one follows (its own ID when leader, 0
	// when it knows of none).
	Leader uint64
	// RaftTerm grows by one with every election.
	RaftTerm uint64
	// RaftIndex is the index of the last Raft entry applied.
	RaftIndex uint64
	// Revision is the MVCC store's revision: every write adds one.
	Revision int64
	// CompactRevision is the revision history is compacted to; 0 if never.
	CompactRevision int64
	// DBSize is the size of the database file; DBSizeInUse the part of it
	// holding data (the rest is free pages only a defragmentation returns).
	DBSize, DBSizeInUse int64
}

// Status is the whole cluster's state.
type Status struct {
	Members []MemberStatus
	// Leader is the name of the member the running members follow; "" if
	// they know of no leader or disagree.
	Leader string
	// Alarms raised in the cluster, as seen by the first running member,
	// e.g. "NOSPACE on member 8e9e05c52164694d"; empty when healthy.
	Alarms []string
}

// Status reports every member's state.
func (c *Cluster) Status() Status {
	var st Status
	alarmsRead := false
	leaders := map[uint64]bool{}
	for _, m := range c.Members() {
		ms := m.status()
		st.Members = append(st.Members, ms)
		if ms.Running {
			leaders[ms.Leader] = true
		}
		if ms.Running && !alarmsRead {
			for _, a := range m.srv.Alarms() {
				st.Alarms = append(st.Alarms, fmt.Sprintf("%s on member %s", a.Alarm, types.ID(a.MemberID)))
			}
			alarmsRead = true
		}
	}
	if len(leaders) == 1 {
		for _, ms := range st.Members {
			if leaders[ms.ID] {
				st.Leader = ms.Name
			}
		}
	}
	return st
}

// status reads the member's figures from its running server.
func (m *Member) status() MemberStatus {
	ms := MemberStatus{Name: m.name, ClientURL: m.ClientURL()}
	if m.srv == nil {
		return ms
	}
	ms.ID = uint64(m.srv.MemberID())
	if !m.Running() {
		return ms
	}
	kv := m.srv.KV()
	ms.Running = true
	ms.Leader = uint64(m.srv.Leader())
	ms.IsLeader = ms.Leader == ms.ID
	ms.RaftTerm = m.srv.Term()
	ms.RaftIndex = m.srv.AppliedIndex()
	ms.Revision = kv.Rev()
	ms.CompactRevision = max(kv.FirstRev(), 0) // -1 before the first compaction
	ms.DBSize = m.srv.Backend().Size()
	ms.DBSizeInUse = m.srv.Backend().SizeInUse()
	return ms
}

// Member returns the member called name.
func (c *Cluster) Member(name string) (*Member, error) {
	for _, m := range c.Members() {
		if m.name == name {
			return m, nil
		}
	}
	return nil, fmt.Errorf("%w %q: the members are %v", ErrNoSuchMember, name, c.memberNameList())
}

func (c *Cluster) memberNameList() []string {
	var names []string
	for _, m := range c.Members() {
		names = append(names, m.name)
	}
	return names
}

// Leader returns the running member that is the leader, or nil if there is
// none right now (an election is going on, or quorum is lost).
func (c *Cluster) Leader() *Member {
	for _, m := range c.Members() {
		if m.Running() && m.srv.Leader() == m.srv.MemberID() {
			return m
		}
	}
	return nil
}

// MoveLeader hands leadership to the member called to (etcdctl
// move-leader) and returns once every running member follows it. Moving
// it to the leader itself does nothing.
func (c *Cluster) MoveLeader(ctx context.Context, to string) error {
	target, err := c.Member(to)
	if err != nil {
		return err
	}
	if !target.Running() {
		return fmt.Errorf("cannot move the etcd leader to %s: it is stopped", to)
	}
	leader := c.Leader()
	if leader == nil {
		return errors.New("cannot move the etcd leader: there is no leader right now")
	}
	if leader == target {
		return nil
	}
	if err := leader.srv.MoveLeader(ctx, uint64(leader.srv.MemberID()), uint64(target.srv.MemberID())); err != nil {
		return fmt.Errorf("moving the etcd leader from %s to %s: %w", leader.name, to, err)
	}
	return c.waitLeader(ctx)
}

// StopMember stops one member as a crash would, without handing
// leadership over, and keeps its data for RestartMember. With three
// members, the other two keep a quorum and elect a new leader if needed.
func (c *Cluster) StopMember(name string) error {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	m, err := c.Member(name)
	if err != nil {
		return err
	}
	if !m.Running() {
		return fmt.Errorf("etcd member %s is already stopped", name)
	}
	return m.stop()
}

// RestartMember starts a stopped member again from its data directory, on
// the same client and peer URLs (the cluster's membership records them),
// and returns once it has rejoined the cluster and serves clients.
func (c *Cluster) RestartMember(ctx context.Context, name string) error {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	old, err := c.Member(name)
	if err != nil {
		return err
	}
	if old.Running() {
		return fmt.Errorf("etcd member %s is running; stop it first", name)
	}
	clientPort, _ := strconv.Atoi(old.clientURL.Port()) // the URLs were built from bound listeners
	peerPort, _ := strconv.Atoi(old.peerURL.Port())
	m, err := listenMember(&c.cfg, name, clientPort, peerPort)
	if err != nil {
		return err
	}
	if err := c.startMember(ctx, m); err != nil {
		return errors.Join(err, m.stop())
	}
	c.mu.Lock()
	c.members[slices.Index(c.members, old)] = m
	c.mu.Unlock()
	return c.waitLeader(ctx)
}

// startMember starts the etcd server of a listening member that has data,
// waits until it has rejoined, then serves clients.
func (c *Cluster) startMember(ctx context.Context, m *Member) error {
	sc, err := c.cfg.serverConfig(m, bootstrap{})
	if err != nil {
		return err
	}
	if err := m.startServer(sc); err != nil {
		return err
	}
	select {
	case <-m.srv.ReadyNotify():
	case <-m.srv.StopNotify():
		return fmt.Errorf("etcd member %s stopped before it became ready (its errors are in the etcd log)", m.name)
	case <-ctx.Done():
		return fmt.Errorf("etcd member %s did not rejoin the cluster: %w", m.name, context.Cause(ctx))
	}
	m.serveClients()
	return nil
}
