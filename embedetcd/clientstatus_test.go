package embedetcd

import (
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// An etcd minicp did not start is described through its client with the
// figures the in-process Status gives, including a stopped member.
func TestStatusOfAgreesWithTheInProcessStatus(t *testing.T) {
	c := startThree(t)
	ctx := testContext(t)
	var last *clientv3.PutResponse
	for i := range 4 {
		var err error
		if last, err = c.Client().Put(ctx, fmt.Sprintf("k%d", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Client().Compact(ctx, last.Header.Revision-1, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	var in, out Status
	eventually(t, "every member to apply the compaction", func() bool {
		in = c.Status()
		for _, m := range in.Members {
			if m.CompactRevision != last.Header.Revision-1 {
				return false
			}
		}
		return true
	})
	out, err := StatusOf(ctx, c.Client())
	if err != nil {
		t.Fatal(err)
	}
	if out.Leader != in.Leader || len(out.Members) != len(in.Members) {
		t.Fatalf("got leader %q and %d members, want %q and %d", out.Leader, len(out.Members), in.Leader, len(in.Members))
	}
	byName := map[string]MemberStatus{}
	for _, m := range in.Members {
		byName[m.Name] = m
	}
	for _, m := range out.Members {
		want := byName[m.Name]
		if !m.Running || m.ID != want.ID || m.IsLeader != want.IsLeader || m.RaftTerm != want.RaftTerm ||
			m.Revision != last.Header.Revision || m.CompactRevision != last.Header.Revision-1 || m.DBSize <= 0 {
			t.Errorf("member %s: got %+v, want %+v", m.Name, m, want)
		}
	}

	stopped := in.Members[0].Name
	if in.Members[0].IsLeader {
		stopped = in.Members[1].Name
	}
	if err := c.StopMember(stopped); err != nil {
		t.Fatal(err)
	}
	out, err = StatusOf(ctx, c.Client())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range out.Members {
		if m.Running == (m.Name == stopped) {
			t.Errorf("member %s: running %t after stopping %s", m.Name, m.Running, stopped)
		}
	}
}

// M12: a key bound to a lease shows the lease and its
// countdown; a plain key shows none; a missing key is not found; a revoked
// lease shows TTL -1.
func TestKeyLeasesShowsEachKeysLeaseAndItsRemainingTTL(t *testing.T) {
	c := startCluster(t, testConfig(t))
	ctx := testContext(t)
	cli := c.Client()
	grant, err := cli.Grant(ctx, 30)
	if err != nil {
		t.Fatal(err)
	}
	gone, err := cli.Grant(ctx, 30)
	if err != nil {
		t.Fatal(err)
	}
	for key, opts := range map[string][]clientv3.OpOption{
		"bound": {clientv3.WithLease(grant.ID)}, "plain": nil, "revoked": {clientv3.WithLease(gone.ID)},
	} {
		if _, err := cli.Put(ctx, key, "v", opts...); err != nil {
			t.Fatal(err)
		}
	}
	// A revoked lease takes its key with it: its ID is read before.
	before, err := KeyLeases(ctx, cli, []string{"revoked"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Revoke(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}

	got, err := KeyLeases(ctx, cli, []string{"bound", "plain", "missing", "revoked"})
	if err != nil {
		t.Fatal(err)
	}
	bound := got[0]
	if !bound.Found || bound.LeaseID != int64(grant.ID) || bound.GrantedTTL != 30 || bound.TTL <= 0 || bound.TTL > 30 {
		t.Errorf("bound key: got %+v, want lease %x granted 30 s with 0 < TTL <= 30", bound, grant.ID)
	}
	if got[1] != (KeyLease{Key: "plain", Found: true}) {
		t.Errorf("plain key: got %+v, want found with no lease", got[1])
	}
	if got[2] != (KeyLease{Key: "missing"}) {
		t.Errorf("missing key: got %+v, want not found", got[2])
	}
	if got[3].Found {
		t.Errorf("key of a revoked lease: got %+v, want deleted with its lease", got[3])
	}
	if before[0].LeaseID != int64(gone.ID) || before[0].TTL <= 0 {
		t.Errorf("before the revoke: got %+v, want lease %x alive", before[0], gone.ID)
	}
	ttls, err := timesToLive(ctx, cli, before)
	if err != nil {
		t.Fatal(err)
	}
	if ttls[int64(gone.ID)].TTL != -1 {
		t.Errorf("revoked lease: got TTL %d, want -1", ttls[int64(gone.ID)].TTL)
	}
}

// More keys than one transaction carries are read in several.
func TestKeyLeasesReadsManyKeysInSeveralTransactions(t *testing.T) {
	c := startCluster(t, testConfig(t))
	ctx := testContext(t)
	grant, err := c.Client().Grant(ctx, int64((time.Minute).Seconds()))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := range keysPerTxn*2 + 3 {
		key := fmt.Sprintf("node-%03d", i)
		keys = append(keys, key)
		if _, err := c.Client().Put(ctx, key, "v", clientv3.WithLease(grant.ID)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := KeyLeases(ctx, c.Client(), keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, kl := range got {
		if kl.Key != keys[i] || kl.LeaseID != int64(grant.ID) || kl.TTL <= 0 {
			t.Fatalf("key %d: got %+v, want %s on lease %x", i, kl, keys[i], grant.ID)
		}
	}
}
