package registry

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"minicp/embedetcd"
)

// compactRevKeyState returns the value and version of compact_rev_key.
func compactRevKeyState(t *testing.T, client *clientv3.Client) (value int64, version int64) {
	t.Helper()
	resp, err := client.Get(testContext(t), CompactRevKey)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) == 0 {
		return 0, 0
	}
	value, err = strconv.ParseInt(string(resp.Kvs[0].Value), 10, 64)
	if err != nil {
		t.Fatalf("%s holds %q, want a revision", CompactRevKey, resp.Kvs[0].Value)
	}
	return value, resp.Kvs[0].Version
}

func writeSome(t *testing.T, client *clientv3.Client, n int) int64 {
	t.Helper()
	var rev int64
	for i := range n {
		resp, err := client.Put(testContext(t), fmt.Sprintf("/registry/things/%d", i), "x")
		if err != nil {
			t.Fatal(err)
		}
		rev = resp.Header.Revision
	}
	return rev
}

func compactedRevision(t *testing.T, client *clientv3.Client) int64 {
	t.Helper()
	rev, err := embedetcd.CompactedRevision(testContext(t), client)
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// M6: two apiservers on one etcd compact once per round
// between them, each round to the revision the winner saw one round
// earlier; the loser learns from compact_rev_key what was compacted.
func TestTwoCompactorsOnOneEtcdCompactOncePerRound(t *testing.T) {
	client := startEtcd(t)
	ctx := testContext(t)
	a, b := newCompactor(client, time.Minute, nil), newCompactor(client, time.Minute, nil)

	// Round 1: a wins and only records where history starts.
	for _, c := range []*Compactor{a, b} {
		if err := c.compactOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	_, version := compactRevKeyState(t, client)
	if version != 1 || compactedRevision(t, client) != 0 {
		t.Fatalf("after round 1: %s version %d, compacted %d; want version 1 and nothing compacted", CompactRevKey, version, compactedRevision(t, client))
	}
	seenInRound1 := a.rev
	writeSome(t, client, 5)

	// Round 2: a wins again and compacts to what it saw in round 1.
	for _, c := range []*Compactor{a, b} {
		if err := c.compactOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	value, version := compactRevKeyState(t, client)
	if got := compactedRevision(t, client); got != seenInRound1 || value != seenInRound1 || version != 2 {
		t.Fatalf("after round 2: compacted %d, %s = %d version %d; want %d, %d, version 2", got, CompactRevKey, value, version, seenInRound1, seenInRound1)
	}
	if a.CompactedRevision() != seenInRound1 || b.CompactedRevision() != seenInRound1 {
		t.Errorf("compactors report %d and %d, want both %d", a.CompactedRevision(), b.CompactedRevision(), seenInRound1)
	}
	seenByBInRound2 := b.rev
	writeSome(t, client, 5)

	// Round 3: b ticks first this time and takes its turn; a's compare
	// fails, so the round still compacts once.
	for _, c := range []*Compactor{b, a} {
		if err := c.compactOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	value, version = compactRevKeyState(t, client)
	if got := compactedRevision(t, client); got != seenByBInRound2 || value != seenByBInRound2 || version != 3 {
		t.Fatalf("after round 3: compacted %d, %s = %d version %d; want %d, %d, version 3", got, CompactRevKey, value, version, seenByBInRound2, seenByBInRound2)
	}
}

func TestCompactorCompactsEveryIntervalUntilStopped(t *testing.T) {
	client := startEtcd(t)
	c := StartCompactor(client, 20*time.Millisecond, nil)
	defer c.Stop()
	first := writeSome(t, client, 3)
	deadline := time.Now().Add(10 * time.Second)
	for compactedRevision(t, client) < first {
		if time.Now().After(deadline) {
			t.Fatalf("etcd not compacted past %d within 10s (compacted %d)", first, compactedRevision(t, client))
		}
		writeSome(t, client, 1)
	}
	c.Stop()
	c.Stop() // a second Stop returns at once
	if c.CompactedRevision() < first {
		t.Errorf("CompactedRevision = %d, want at least %d", c.CompactedRevision(), first)
	}
}

func TestCompactorWithZeroIntervalNeverCompacts(t *testing.T) {
	client := startEtcd(t)
	c := StartCompactor(client, 0, nil)
	if c.done != nil {
		t.Fatal("a disabled compactor started its loop")
	}
	c.Stop()
	writeSome(t, client, 3)
	if _, version := compactRevKeyState(t, client); version != 0 {
		t.Errorf("%s was written by a disabled compactor", CompactRevKey)
	}
}
