//go:build linux

package robustness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/kubernetes"
)

// M5, M6, M8: raw watches and informers, through the watch cache and
// without it, see exactly etcd's history of the objects they watch, in
// order, nothing missing and nothing twice, while leaders move between
// three etcd members, compaction runs every second and minicp is killed and
// restarted (the cache on in odd runs, off in even ones); a watch that gets
// 410 Gone lists again and goes on from the list.
func TestWatchesMatchEtcdHistoryThroughKillsLeaderMovesAndCompaction(t *testing.T) {
	rounds := pick(3, 20)
	c := startChild(t, childOptions{Members: 3, Flags: []string{
		"--etcd-compaction-interval=1s",
		"--watch-cache-bookmark-frequency=1s",
		"--experimental-watch-progress-notify-interval=1s",
	}})
	cs := c.clientset()
	createNamespace(t, cs)
	ctx := testContext(t, 30*time.Minute)
	tr, err := newTruth(ctx, c.etcdEndpoints())
	if err != nil {
		t.Fatal(err)
	}
	followTruth := func() {
		if err := tr.follow(c.etcdEndpoints()); err != nil {
			t.Fatalf("following etcd's history: %v", err)
		}
	}
	followTruth()
	c.onEtcd = followTruth
	defer tr.pause()

	raws, informers, stopWatchers := startWatchers(t, c, pick(3, 6))
	w := newWriters(pick(3, 6), pick(8, 16))
	var moves, moveFailures int
	for round := 1; round <= rounds; round++ {
		m, f := chaosRound(t, c, cs, w, randomDuration(pick(1500*time.Millisecond, 3*time.Second), pick(3*time.Second, 8*time.Second)))
		moves, moveFailures = moves+m, moveFailures+f
		tr.pause()
		c.start("--watch-cache=" + strconv.FormatBool(round%2 == 0))
		cs = c.clientset()
		res, err := w.check(ctx, cs)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		for _, v := range res.violations {
			t.Errorf("round %d: %s", round, v)
		}
	}
	// A last burst of writes on the last run, without a kill, then wait
	// for every watcher to reach etcd's last change.
	writeFor(cs, w, time.Second)
	last := waitQuiet(t, ctx, c, tr, raws, informers)
	stopWatchers()
	report := checkAll(t, tr.snapshot(), raws, informers)
	t.Logf("robustness: watch rounds=%d etcd_changes=%d last_revision=%d %s leader_moves=%d (failed %d) acknowledged=%d",
		rounds, len(tr.snapshot().events), last, report, moves, moveFailures, w.acked.Load())
}

// startWatchers starts n raw watchers and two informers (JSON and
// protobuf); the returned stop ends them all and waits for them.
func startWatchers(t *testing.T, c *child, n int) ([]*rawWatcher, []*informerWatcher, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var raws []*rawWatcher
	for i := range n {
		// Every other watcher is slow to come back: compaction every
		// second leaves it behind, so it gets 410 Gone and lists again.
		lag := time.Duration(i%2) * 4 * time.Second
		rw, err := newRawWatcher(fmt.Sprintf("raw watch %d (lag %s)", i, lag), c.restConfig(), lag)
		if err != nil {
			t.Fatal(err)
		}
		raws = append(raws, rw)
		wg.Add(1)
		go func() { // the raw watcher, until stop
			defer wg.Done()
			rw.run(ctx)
		}()
	}
	var infs []*informerWatcher
	for i, proto := range []bool{false, true} {
		cfg := c.restConfig()
		if proto {
			cfg.ContentType = "application/vnd.kubernetes.protobuf"
		}
		iw, err := newInformerWatcher(fmt.Sprintf("informer %d (protobuf %v)", i, proto), kubernetes.NewForConfigOrDie(cfg))
		if err != nil {
			t.Fatal(err)
		}
		infs = append(infs, iw)
		iw.factory.Start(ctx.Done()) // its goroutines end with ctx
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			for _, iw := range infs {
				iw.factory.Shutdown()
			}
		})
	}
	t.Cleanup(stop)
	return raws, infs, stop
}

// chaosRound writes and moves etcd's leader for d, then kills minicp with
// SIGKILL while both go on; it returns the leader moves done and failed.
func chaosRound(t *testing.T, c *child, cs kubernetes.Interface, w *writers, d time.Duration) (moves, failures int) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the writers, until cancel
		defer wg.Done()
		w.run(ctx, cs)
	}()
	go func() { // the leader mover, until cancel
		defer wg.Done()
		moves, failures = moveLeaders(ctx, c.etcdEndpoints())
	}()
	wait(d)
	c.kill()
	cancel()
	wg.Wait()
	return moves, failures
}

// moveLeaders moves etcd's leader to a random other member every 200-700
// ms until ctx ends.
func moveLeaders(ctx context.Context, endpoints []string) (moves, failures int) {
	clients := make([]*clientv3.Client, len(endpoints))
	for i, ep := range endpoints {
		cli, err := newEtcdClient([]string{ep})
		if err != nil {
			return 0, 1
		}
		defer cli.Close()
		clients[i] = cli
	}
	for {
		select {
		case <-ctx.Done():
			return moves, failures
		case <-time.After(randomDuration(200*time.Millisecond, 700*time.Millisecond)):
		}
		if err := moveLeaderOnce(ctx, clients); err != nil {
			failures++
		} else {
			moves++
		}
	}
}

// moveLeaderOnce asks the leader to hand leadership to another member.
func moveLeaderOnce(ctx context.Context, clients []*clientv3.Client) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	ids := make([]uint64, len(clients))
	leader := -1
	for i, cli := range clients {
		st, err := cli.Status(ctx, cli.Endpoints()[0])
		if err != nil {
			return err
		}
		ids[i] = st.Header.MemberId
		if st.Leader == st.Header.MemberId {
			leader = i
		}
	}
	if leader < 0 {
		return fmt.Errorf("no leader")
	}
	to := (leader + 1 + rand.IntN(len(clients)-1)) % len(clients)
	_, err := clients[leader].MoveLeader(ctx, ids[to])
	return err
}

// writeFor runs the writers for d on a running minicp.
func writeFor(cs kubernetes.Interface, w *writers, d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	w.run(ctx, cs)
}

// waitQuiet waits until etcd's history is read up to its current revision,
// every raw watcher has reached etcd's last change, and every informer
// holds etcd's state; it returns that revision. Writes cancelled by the
// writers' context may still land, so the target is read again each time.
func waitQuiet(t *testing.T, ctx context.Context, c *child, tr *truth, raws []*rawWatcher, infs []*informerWatcher) int64 {
	t.Helper()
	cli, err := newEtcdClient(c.etcdEndpoints())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var rev int64
	err = retry(wctx, func() error {
		resp, err := cli.Get(wctx, truthPrefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			return err
		}
		rev = resp.Header.Revision
		if err := tr.waitSeen(wctx, rev); err != nil {
			return err
		}
		want, lastChange := tr.state()
		for _, rw := range raws {
			if at := rw.at(); at < lastChange {
				return fmt.Errorf("%s is at %d, etcd's last change at %d", rw.name, at, lastChange)
			}
		}
		for _, iw := range infs {
			if diff := diffStates(iw.store(), want); diff != "" {
				return fmt.Errorf("%s does not hold etcd's state at %d: %s", iw.name, rev, diff)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("watchers did not catch up: %v", err)
	}
	return rev
}

// diffStates describes how got differs from want, "" if it does not.
func diffStates(got, want map[string]objState) string {
	var diffs []string
	for name, w := range want {
		if g, ok := got[name]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s missing (etcd: %q at %d)", name, w.value, w.rv))
		} else if g != w {
			diffs = append(diffs, fmt.Sprintf("%s is %q at %d (etcd: %q at %d)", name, g.value, g.rv, w.value, w.rv))
		}
	}
	for name, g := range got {
		if _, ok := want[name]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s=%q at %d, deleted in etcd", name, g.value, g.rv))
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}

// checkAll checks every watcher against the history, reports violations
// as test errors and returns the summary figures.
func checkAll(t *testing.T, h history, raws []*rawWatcher, infs []*informerWatcher) string {
	t.Helper()
	if h.lostFrom != 0 {
		t.Errorf("etcd compacted revisions after %d before the checker read them: the check is incomplete", h.lostFrom)
	}
	var events, lists, watches, gone, violations, notices, resyncs int
	for _, rw := range raws {
		rw.mu.Lock()
		v := checkSegments(rw.name, &h, rw.segments)
		lists += len(rw.segments)
		watches, gone = watches+rw.watches, gone+rw.gone
		for _, e := range rw.errors {
			t.Logf("%s: %s", rw.name, e)
		}
		rw.mu.Unlock()
		events += v.checked
		violations += report(t, v)
	}
	for _, iw := range infs {
		iw.mu.Lock()
		v, r := checkNotices(iw.name, &h, iw.notices)
		iw.mu.Unlock()
		notices, resyncs = notices+v.checked, resyncs+r
		violations += report(t, v)
	}
	return fmt.Sprintf("raw_checked=%d lists=%d watches=%d gone_410=%d informer_notices=%d resyncs=%d violations=%d",
		events, lists, watches, gone, notices, resyncs, violations)
}

// report fails the test with a verdict's first violations and returns how
// many there were.
func report(t *testing.T, v verdict) int {
	t.Helper()
	for i, msg := range v.violations {
		if i == 20 {
			t.Errorf("... and %d more", len(v.violations)-20)
			break
		}
		t.Error(msg)
	}
	return len(v.violations)
}

// testContext ends with the test or after d.
func testContext(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
