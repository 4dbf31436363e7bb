package registry

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"minicp/internal/testsupport"
)

// nodeLeaseTTL binds leases in kube-node-lease to etcd leases of their
// leaseDurationSeconds, as controlplane does with --node-lease-etcd-binding.
func nodeLeaseTTL(res *Resource, obj runtime.Object) time.Duration {
	l, ok := obj.(*coordinationv1.Lease)
	if !ok || l.Namespace != "kube-node-lease" || l.Spec.LeaseDurationSeconds == nil {
		return 0
	}
	return time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
}

func newKeyLeaseStore(t *testing.T) (*Store, *clientv3.Client) {
	s, client := newTestStore(t, Options{KeyTTL: nodeLeaseTTL})
	createNamespace(t, s, "kube-node-lease")
	return s, client
}

func createNodeLease(t *testing.T, s *Store, name string, seconds int32) *coordinationv1.Lease {
	t.Helper()
	l := newLease(name)
	l.Spec.LeaseDurationSeconds = &seconds
	out, err := s.Create(testContext(t), mustResource(t, coordinationV1, "leases"), "kube-node-lease", l, WriteOptions{})
	if err != nil {
		t.Fatalf("creating lease %s: %v", name, err)
	}
	return out.(*coordinationv1.Lease)
}

// renew updates a Node Lease's renewTime, as a kubelet's heartbeat does.
func renew(t *testing.T, s *Store, name string, tryUpdate UpdateFunc) *coordinationv1.Lease {
	t.Helper()
	if tryUpdate == nil {
		tryUpdate = func(cur runtime.Object) (runtime.Object, error) {
			l := cur.(*coordinationv1.Lease)
			l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
			return l, nil
		}
	}
	out, _, err := s.Update(testContext(t), mustResource(t, coordinationV1, "leases"), "kube-node-lease", name, UpdateOptions{}, tryUpdate)
	if err != nil {
		t.Fatalf("renewing lease %s: %v", name, err)
	}
	return out.(*coordinationv1.Lease)
}

// keyLease returns the etcd lease a key is bound to (0: none or no key).
func keyLease(t *testing.T, client *clientv3.Client, key string) clientv3.LeaseID {
	t.Helper()
	resp, err := client.Get(testContext(t), key)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) == 0 {
		return 0
	}
	return clientv3.LeaseID(resp.Kvs[0].Lease)
}

func timeToLive(t *testing.T, client *clientv3.Client, id clientv3.LeaseID) *clientv3.LeaseTimeToLiveResponse {
	t.Helper()
	resp, err := client.TimeToLive(testContext(t), id)
	if err != nil {
		t.Fatalf("TimeToLive(%x): %v", id, err)
	}
	return resp
}

// M12: each Node Lease key holds an etcd lease of its
// own, granted with the Lease's leaseDurationSeconds.
func TestKeyTTLBindsEachKeyToAnEtcdLeaseOfItsOwn(t *testing.T) {
	s, client := newKeyLeaseStore(t)
	createNodeLease(t, s, "node-a", 40)
	createNodeLease(t, s, "node-b", 40)
	if _, err := s.Create(testContext(t), mustResource(t, coordinationV1, "leases"), "default", newLease("elsewhere"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}

	a := keyLease(t, client, "/registry/leases/kube-node-lease/node-a")
	b := keyLease(t, client, "/registry/leases/kube-node-lease/node-b")
	if a == 0 || b == 0 || a == b {
		t.Fatalf("node leases bound to etcd leases %x and %x, want two distinct leases", a, b)
	}
	if got := timeToLive(t, client, a).GrantedTTL; got != 40 {
		t.Errorf("granted TTL: got %d, want 40 (leaseDurationSeconds)", got)
	}
	if got := keyLease(t, client, "/registry/leases/default/elsewhere"); got != 0 {
		t.Errorf("a lease outside kube-node-lease is bound to etcd lease %x, want a plain key", got)
	}
}

// M12: a renewal is one write that keeps the key on the
// same etcd lease, plus a KeepAlive that restarts its countdown.
func TestRenewalKeepsTheEtcdLeaseAndRestartsItsCountdown(t *testing.T) {
	s, client := newKeyLeaseStore(t)
	createNodeLease(t, s, "node-a", 10)
	key := "/registry/leases/kube-node-lease/node-a"
	id := keyLease(t, client, key)

	// etcd reports whole seconds, cut: at 7 s or less, under 8 s are left,
	// and a countdown not restarted stays there. A restarted one reads at
	// least 8 for 2 s after the renewal began, time enough for the renewal
	// and the read on a loaded machine.
	deadline := time.Now().Add(15 * time.Second)
	for timeToLive(t, client, id).TTL > 7 {
		if time.Now().After(deadline) {
			t.Fatal("the lease's TTL did not go down")
		}
		time.Sleep(100 * time.Millisecond)
	}
	start := time.Now()
	renew(t, s, "node-a", nil)
	if got := keyLease(t, client, key); got != id {
		t.Fatalf("after the renewal the key is bound to %x, want the same lease %x", got, id)
	}
	if got := timeToLive(t, client, id).TTL; got < 8 {
		t.Errorf("remaining TTL %v after the renewal began: got %d, want about 10", time.Since(start), got)
	}
}

func TestAChangedLeaseDurationMovesTheKeyToANewEtcdLease(t *testing.T) {
	s, client := newKeyLeaseStore(t)
	createNodeLease(t, s, "node-a", 10)
	key := "/registry/leases/kube-node-lease/node-a"
	before := keyLease(t, client, key)
	renew(t, s, "node-a", func(cur runtime.Object) (runtime.Object, error) {
		l := cur.(*coordinationv1.Lease)
		d := int32(20)
		l.Spec.LeaseDurationSeconds = &d
		return l, nil
	})
	after := keyLease(t, client, key)
	if after == before || after == 0 {
		t.Fatalf("after changing the duration the key is on lease %x, want a new one (was %x)", after, before)
	}
	if got := timeToLive(t, client, after).GrantedTTL; got != 20 {
		t.Errorf("granted TTL of the new lease: got %d, want 20", got)
	}
}

// M12: when the writes stop, etcd deletes the key once the
// lease runs out, and watchers see DELETED; the next write recreates it.
func TestAnExpiredKeyIsDeletedAndTheNextWriteRecreatesItOnANewLease(t *testing.T) {
	s, client := newKeyLeaseStore(t)
	ctx := testContext(t)
	key := "/registry/leases/kube-node-lease/node-a"
	created := createNodeLease(t, s, "node-a", 2)
	first := keyLease(t, client, key)

	w := client.Watch(ctx, key, clientv3.WithRev(rvOf(t, created)+1))
	deleted := false
	for resp := range w {
		for _, ev := range resp.Events {
			deleted = deleted || ev.Type == clientv3.EventTypeDelete
		}
		if deleted || resp.Err() != nil {
			break
		}
	}
	if !deleted {
		t.Fatal("the watch ended without a DELETE of the expired key")
	}

	// The heartbeat's update carries the resourceVersion it last saw;
	// leases allow create-on-update, so the key comes back.
	stale := created.DeepCopy()
	stale.Spec.RenewTime = &metav1.MicroTime{Time: time.Now().Truncate(time.Microsecond)}
	out := renew(t, s, "node-a", func(runtime.Object) (runtime.Object, error) { return stale, nil })
	second := keyLease(t, client, key)
	if second == 0 || second == first {
		t.Fatalf("recreated key is on lease %x, want a new lease (the expired one was %x)", second, first)
	}
	if out.Spec.RenewTime == nil || !out.Spec.RenewTime.Equal(stale.Spec.RenewTime) {
		t.Errorf("recreated lease has renewTime %v, want %v", out.Spec.RenewTime, stale.Spec.RenewTime)
	}
}

// An update may be applied just after its key's lease ran out, before etcd
// revokes it (the leader looks for expired leases twice a second): etcd
// then deletes the key the update wrote. The Store sees this in the
// KeepAlive that follows and writes again on a fresh lease, so a
// successful update always leaves the key stored on a live lease.
func TestAnUpdateRacingTheExpiryOfItsLeaseLeavesTheKeyOnALiveLease(t *testing.T) {
	var logs testsupport.SyncBuffer
	s, client := newTestStore(t, Options{KeyTTL: nodeLeaseTTL, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	createNamespace(t, s, "kube-node-lease")
	key := "/registry/leases/kube-node-lease/node-a"
	last := createNodeLease(t, s, "node-a", 1)
	lastWrite := time.Now()
	const rounds = 2
	for range rounds {
		// Compute the update, then write a little after the lease ran out,
		// while etcd is about to revoke it (or has just done so).
		waited := false
		last = renew(t, s, "node-a", func(cur runtime.Object) (runtime.Object, error) {
			if !waited {
				for time.Since(lastWrite) < 1100*time.Millisecond {
					time.Sleep(10 * time.Millisecond)
				}
				waited = true
			}
			// After the race the key is gone: the heartbeat writes what
			// it wrote last, as a kubelet does.
			l := last.DeepCopy()
			if cur != nil {
				l = cur.(*coordinationv1.Lease)
			}
			l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
			return l, nil
		})
		lastWrite = time.Now()
		id := keyLease(t, client, key)
		if id == 0 {
			t.Fatal("after a successful update the key is gone")
		}
		if ttl := timeToLive(t, client, id).TTL; ttl < 0 {
			t.Fatalf("after a successful update the key is on lease %x, which etcd no longer has", id)
		}
	}
	// The window is up to half a second wide and the write lands 100 ms
	// into it, so it is all but always hit; without it the test proves little.
	if n := strings.Count(logs.String(), "expired as it was written"); n == 0 {
		t.Errorf("none of the %d writes raced the expiry of its lease; the race path went untested", rounds)
	}
}
