package embedetcd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/types"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/storage/wal"
)

// startTimeout bounds Start when its context has no earlier deadline: a
// cluster that cannot elect a leader fails with an error instead of hanging.
const startTimeout = time.Minute

// Cluster is a running set of in-process etcd members and one client over
// all of them. Start creates it; Close stops it.
type Cluster struct {
	cfg    Config
	client *clientv3.Client // nil until every member is ready

	// opMu serialises the operations that start or stop members
	// (StopMember, RestartMember, Close). Lock order: opMu, then mu.
	opMu sync.Mutex
	// mu guards members: RestartMember puts a new *Member in the place of
	// the stopped one. Held only to read or swap entries.
	mu      sync.Mutex
	members []*Member // in name order

	closeOnce sync.Once // makes Close run its shutdown once
	closeErr  error     // result of the first Close, returned by every later one; written inside closeOnce
}

// Start boots cfg.Members etcd members in cfg.DataDir and returns once each
// of them is ready to serve clients, all agree on a leader and a quorum
// read through Client succeeds. ctx bounds only the start-up (at most
// a minute); the cluster then runs until Close.
//
// A member whose data directory already holds a WAL restarts from it with
// all its keys and revisions; otherwise the members bootstrap a new
// cluster together. If Start fails it stops everything it started, and a
// cluster it was bootstrapping leaves no member data behind: etcd v3.7
// rebuilds a restarting member's Raft membership from its backend, so a
// member stopped before it applied its first entries would restart with no
// voters and never elect a leader.
func Start(ctx context.Context, cfg Config) (_ *Cluster, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger()
	}
	c := &Cluster{cfg: cfg}
	var created []string // member data directories this start creates
	defer func() {
		if err != nil {
			if cerr := c.Close(); cerr != nil {
				err = errors.Join(err, fmt.Errorf("cleaning up after the failed start: %w", cerr))
			}
			for _, dir := range created {
				if rerr := os.RemoveAll(dir); rerr != nil {
					err = errors.Join(err, fmt.Errorf("removing the half-bootstrapped member data: %w", rerr))
				}
			}
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()

	for i, name := range cfg.memberNames() {
		m, err := listenMember(&c.cfg, name, memberPort(cfg.ClientPort, i), memberPort(cfg.PeerPort, i))
		if err != nil {
			return nil, err
		}
		c.members = append(c.members, m)
	}
	b, err := c.bootstrap()
	if err != nil {
		return nil, err
	}
	if b.initialCluster != nil {
		for _, m := range c.members {
			dir := filepath.Join(m.dataDir, "member")
			if _, serr := os.Stat(dir); errors.Is(serr, os.ErrNotExist) {
				created = append(created, dir)
			}
		}
	}
	for _, m := range c.members {
		sc, err := c.cfg.serverConfig(m, b)
		if err != nil {
			return nil, err
		}
		if err := m.startServer(sc); err != nil {
			return nil, err
		}
	}
	if err := c.waitReady(ctx); err != nil {
		return nil, err
	}
	for _, m := range c.members {
		m.serveClients()
	}
	c.client, err = clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), Logger: c.cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("creating the etcd client for %v: %w", c.Endpoints(), err)
	}
	if err := c.waitLeader(ctx); err != nil {
		return nil, err
	}
	if _, err := c.client.Get(ctx, "minicp-embedetcd-start-check"); err != nil {
		return nil, fmt.Errorf("etcd at %v is ready but does not answer a quorum read: %w", c.Endpoints(), err)
	}
	return c, nil
}

// bootstrap decides between bootstrapping a new cluster (no member has a
// WAL) and restarting one (every member has). Like embed, a restart passes
// no initial cluster: the WAL records the membership, peer URLs included,
// which is why a restarted multi-member cluster needs its old peer ports.
// Data that would be silently ignored (some members only, or a cluster of
// the other size under the same name) is refused.
func (c *Cluster) bootstrap() (bootstrap, error) {
	var have, missing []string
	for _, m := range c.members {
		if hasWAL(m.dataDir) {
			have = append(have, m.name)
		} else {
			missing = append(missing, m.name)
		}
	}
	other := Config{Name: c.cfg.Name, Members: 1}
	if c.cfg.Members == 1 {
		other.Members = 3
	}
	var otherHave []string
	for _, name := range other.memberNames() {
		if hasWAL(filepath.Join(c.cfg.DataDir, name)) {
			otherHave = append(otherHave, name)
		}
	}
	switch {
	case len(have) == 0 && len(otherHave) > 0:
		return bootstrap{}, fmt.Errorf("etcd data directory %s holds a %d-member cluster (%s), not the %d-member one asked for: start with the same member count as before, or use an empty data directory",
			c.cfg.DataDir, other.Members, strings.Join(otherHave, ", "), c.cfg.Members)
	case len(have) == 0:
		initial := types.URLsMap{}
		for _, m := range c.members {
			initial[m.name] = types.URLs{m.peerURL}
		}
		return bootstrap{initialCluster: initial, token: c.cfg.Name}, nil
	case len(missing) > 0:
		return bootstrap{}, fmt.Errorf("etcd data directory %s has data for members %s but not for %s: start with the same member count as before, or use an empty data directory",
			c.cfg.DataDir, strings.Join(have, ", "), strings.Join(missing, ", "))
	case len(c.members) > 1 && c.cfg.PeerPort == 0:
		return bootstrap{}, fmt.Errorf("restarting the %d-member etcd cluster in %s needs the peer ports it was created with (its data records them): pass --etcd-peer-port", len(c.members), c.cfg.DataDir)
	default:
		return bootstrap{}, nil
	}
}

// hasWAL reports whether the member data directory dir holds a WAL, the
// test embed uses to tell a restart from a first start.
func hasWAL(dir string) bool { return wal.Exist(filepath.Join(dir, "member", "wal")) }

// waitReady waits until every member has joined the cluster and published
// its client URL through Raft, which needs an elected leader.
func (c *Cluster) waitReady(ctx context.Context) error {
	for _, m := range c.members {
		select {
		case <-m.srv.ReadyNotify():
		case <-m.srv.StopNotify():
			return fmt.Errorf("etcd member %s stopped before it became ready (its errors are in the etcd log)", m.name)
		case <-ctx.Done():
			return fmt.Errorf("etcd member %s did not become ready: %w", m.name, context.Cause(ctx))
		}
	}
	return nil
}

// waitLeader polls, once per Raft heartbeat, until every running member
// names the same leader.
func (c *Cluster) waitLeader(ctx context.Context) error {
	tick := time.NewTicker(time.Duration(c.cfg.TickMs) * time.Millisecond)
	defer tick.Stop()
	for {
		leaders := map[types.ID]bool{}
		for _, m := range c.Members() {
			if m.Running() {
				leaders[m.srv.Leader()] = true
			}
		}
		if len(leaders) == 1 && !leaders[0] {
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("etcd members did not agree on a leader: %w", context.Cause(ctx))
		}
	}
}

// Endpoints returns the members' client URLs, e.g. "http://127.0.0.1:2379".
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, m := range c.Members() {
		eps = append(eps, m.ClientURL())
	}
	return eps
}

// Client returns the client over all endpoints. The Cluster owns it:
// callers must not close it.
func (c *Cluster) Client() *clientv3.Client { return c.client }

// Members returns the members in name order. After RestartMember the
// restarted member is a new *Member: call Members again.
func (c *Cluster) Members() []*Member {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.members)
}

// Close stops the cluster and waits for every goroutine Start started. It
// is safe to call more than once; later calls return the first result.
//
// Shutdown order:
//  1. close the shared client, so none of our own requests is in flight;
//  2. stop serving clients on every member: gRPC lets in-flight RPCs
//     finish for up to a second, then cuts the rest (open watches end with
//     an error); the HTTP endpoints shut down; the client listener closes;
//  3. stop every etcd server (Raft loop, applier, lessor, compactor,
//     backend), without handing leadership over: every member is going;
//  4. stop serving peers and close the peer listeners, allowing up to a
//     second for Raft streams to end;
//  5. wait for the serving goroutines of every member to return.
//
// Members already stopped by StopMember are skipped.
func (c *Cluster) Close() error {
	c.closeOnce.Do(func() {
		c.opMu.Lock()
		defer c.opMu.Unlock()
		members := slices.DeleteFunc(c.Members(), func(m *Member) bool { return m.stopped })
		var errs []error
		if c.client != nil {
			if err := c.client.Close(); err != nil && !errors.Is(err, context.Canceled) {
				errs = append(errs, fmt.Errorf("closing the etcd client: %w", err))
			}
		}
		for _, m := range members {
			if err := m.stopClients(); err != nil {
				errs = append(errs, fmt.Errorf("etcd member %s: stopping client service: %w", m.name, err))
			}
		}
		for _, m := range members {
			m.stopServer()
		}
		for _, m := range members {
			if err := m.stopPeer(); err != nil {
				errs = append(errs, fmt.Errorf("etcd member %s: stopping peer service: %w", m.name, err))
			}
		}
		for _, m := range members {
			m.wait()
		}
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
}
