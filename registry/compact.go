package registry

// This file is the apiserver's own etcd compactor (M6; series
// part 12, M17). etcd keeps every revision of every key until someone
// compacts; kube-apiserver does it itself, every --etcd-compaction-interval
// (5 minutes by default), independently of etcd's --auto-compaction-*.
//
// Several apiservers share one etcd, and each runs a compactor. They agree on
// who compacts through one key, compact_rev_key: its value is the revision the
// last compaction went to, its version counts compactions (a logical clock).
// At every tick a compactor runs one transaction:
//
//	If(Version(compact_rev_key) == the version it saw last time)
//	Then(Put(compact_rev_key, the revision it saw last time))   // version+1
//	Else(Get(compact_rev_key))
//
// The first compactor to tick wins the round: its Put bumps the version, so
// every other compactor's compare fails until it has caught up with the new
// version at its own tick. The winner then compacts etcd to the revision it
// saw at its previous tick, so history older than one to two intervals is
// dropped, and a client that was away for longer than that must relist.

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// CompactRevKey is the etcd key kube-apiserver's compactors coordinate
// through; minicp uses the same name so mixed setups agree.
const CompactRevKey = "compact_rev_key"

// DefaultCompactionInterval is kube-apiserver's --etcd-compaction-interval.
const DefaultCompactionInterval = 5 * time.Minute

// Compactor compacts etcd every interval, taking turns with every other
// compactor on the same etcd through CompactRevKey. StartCompactor starts
// it; Stop ends it.
type Compactor struct {
	client   *clientv3.Client
	interval time.Duration
	log      *slog.Logger

	// stop is closed by Stop (once); the loop returns when it is.
	stop     chan struct{}
	stopOnce sync.Once
	// done is closed by the loop goroutine when it returns; nil when the
	// compactor is disabled and no goroutine runs.
	done chan struct{}

	// mu guards the fields below: the loop writes them, readers such as
	// status pages and tests read them.
	mu sync.Mutex
	// version is the version of CompactRevKey this compactor expects: its
	// view of how many compactions happened so far.
	version int64
	// rev is the etcd revision seen at the last tick: the next successful
	// round compacts to it.
	rev int64
	// compacted is the last compaction revision this compactor performed
	// or learnt from CompactRevKey; 0 before any.
	compacted int64
}

// StartCompactor starts compacting etcd through client every interval; the
// first round runs after one interval and only records the revision, the
// second compacts. interval 0 disables it (Stop still works).
func StartCompactor(client *clientv3.Client, interval time.Duration, log *slog.Logger) *Compactor {
	c := newCompactor(client, interval, log)
	if interval > 0 {
		c.done = make(chan struct{})
		// The compaction loop: it ends when Stop closes c.stop, and closes
		// c.done on its way out.
		go c.run()
	}
	return c
}

func newCompactor(client *clientv3.Client, interval time.Duration, log *slog.Logger) *Compactor {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Compactor{client: client, interval: interval, log: log, stop: make(chan struct{})}
}

// Stop ends the loop and waits for it; a round in flight is cancelled. It
// is safe to call more than once.
func (c *Compactor) Stop() {
	c.stopOnce.Do(func() { close(c.stop) })
	if c.done != nil {
		<-c.done
	}
}

// Interval is how often the compactor runs a round; 0 when it is disabled.
func (c *Compactor) Interval() time.Duration { return c.interval }

// CompactedRevision is the last revision etcd was compacted to by this or
// another compactor, as far as this one knows; 0 before any compaction.
func (c *Compactor) CompactedRevision() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.compacted
}

// run ticks every interval until Stop.
func (c *Compactor) run() {
	defer close(c.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Ends the rounds' context when Stop is called; returns with run.
	go func() {
		select {
		case <-c.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	timer := time.NewTimer(c.interval)
	defer timer.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-timer.C:
		}
		if err := c.compactOnce(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("etcd compaction failed; retrying at the next interval", "interval", c.interval, "err", err)
		}
		timer.Reset(c.interval)
	}
}

// compactOnce runs one round: the transaction on CompactRevKey and, if this
// compactor won the round and has seen a revision before, the compaction.
func (c *Compactor) compactOnce(ctx context.Context) error {
	c.mu.Lock()
	version, rev := c.version, c.rev
	c.mu.Unlock()

	resp, err := c.client.Txn(ctx).If(
		clientv3.Compare(clientv3.Version(CompactRevKey), "=", version),
	).Then(
		clientv3.OpPut(CompactRevKey, strconv.FormatInt(rev, 10)),
	).Else(
		clientv3.OpGet(CompactRevKey),
	).Commit()
	if err != nil {
		return err
	}
	current := resp.Header.Revision

	if !resp.Succeeded {
		// Another compactor won this round (or several): catch up with it.
		kvs := resp.Responses[0].GetResponseRange().Kvs
		c.mu.Lock()
		defer c.mu.Unlock()
		c.rev = current
		if len(kvs) == 0 { // the key was deleted by hand: start over
			c.version = 0
			return nil
		}
		c.version = kvs[0].Version
		if n, err := strconv.ParseInt(string(kvs[0].Value), 10, 64); err == nil && n > 0 {
			c.compacted = n
		}
		return nil
	}

	c.mu.Lock()
	c.version, c.rev = version+1, current
	c.mu.Unlock()
	if rev == 0 {
		return nil // the first round only records where history starts
	}
	if _, err := c.client.Compact(ctx, rev); err != nil {
		if isCompacted(err) {
			// etcd's own auto-compaction, or an operator, went further.
			c.log.Debug("etcd already compacted past the revision", "revision", rev)
			return nil
		}
		return err
	}
	c.mu.Lock()
	c.compacted = rev
	c.mu.Unlock()
	c.log.Info("etcd compacted", "revision", rev, "current", current, "interval", c.interval)
	return nil
}
