package registry

// Keys bound to their own etcd lease (Options.KeyTTL): minicp's Node Lease
// binding, M12.
//
// A key that KeyTTL gives a TTL is bound to an etcd lease of its own,
// granted with exactly that TTL. A write of the key reuses the lease the key
// is bound to and sends one KeepAlive for it alongside the write: a renewal
// is one MVCC write plus one KeepAlive, and the lease's countdown restarts
// at every write. When writes stop, the lease runs out, etcd deletes the
// key, and watchers see DELETED.
//
// A new lease is granted, and the key moved onto it by the same write,
// when the key has none, when its lease is gone (expired or revoked), or
// when its lease was granted with another TTL. A write can race the expiry
// of the lease it reuses: etcd applies it, then revokes the lease and
// deletes the key. The KeepAlive sent with the write then fails with
// "lease not found" (etcd answers it only once the revoke is applied), and
// the update starts over from a fresh read, recreating the key on a new
// lease, so callers never see the race.

import (
	"context"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// maxKnownLeases bounds the memory of granted TTLs: past it, the memory is
// dropped and rebuilt, one TimeToLive per key, as keys are written again.
const maxKnownLeases = 100000

// keyLeases hands out the per-key leases of KeyTTL.
type keyLeases struct {
	client *clientv3.Client

	// mu guards granted. It is never held across an etcd request.
	mu sync.Mutex
	// granted remembers the TTL (seconds) each lease was granted with, so
	// that a renewal need not ask etcd. An entry may outlive its lease;
	// etcd then refuses the write, and the entry is forgotten.
	granted map[clientv3.LeaseID]int64
}

func newKeyLeases(client *clientv3.Client) *keyLeases {
	return &keyLeases{client: client, granted: map[clientv3.LeaseID]int64{}}
}

// leaseBinding is how one write binds its key.
type leaseBinding struct {
	opts []clientv3.OpOption // put options: WithLease, or none for a plain key
	// keepAlive is the lease to send a KeepAlive for once the write is
	// applied: the key's existing lease, reused. 0 for a fresh grant, whose
	// countdown has just started, and for keys without a lease.
	keepAlive clientv3.LeaseID
}

// binding returns the lease a write of a key currently bound to current
// (0: none) should bind it to, for a TTL of ttl.
func (k *keyLeases) binding(ctx context.Context, current clientv3.LeaseID, ttl time.Duration) (leaseBinding, error) {
	seconds := int64((ttl + time.Second - 1) / time.Second) // etcd TTLs are whole seconds; round up
	if current != 0 {
		granted, err := k.grantedTTL(ctx, current)
		if err != nil {
			return leaseBinding{}, err
		}
		if granted == seconds {
			return leaseBinding{opts: []clientv3.OpOption{clientv3.WithLease(current)}, keepAlive: current}, nil
		}
		k.forget(current)
	}
	resp, err := k.client.Grant(ctx, seconds)
	if err != nil {
		return leaseBinding{}, err
	}
	k.remember(resp.ID, seconds)
	return leaseBinding{opts: []clientv3.OpOption{clientv3.WithLease(resp.ID)}}, nil
}

// grantedTTL returns the TTL id was granted with, asking etcd only when it
// is not known yet; 0 means the lease no longer exists.
func (k *keyLeases) grantedTTL(ctx context.Context, id clientv3.LeaseID) (int64, error) {
	k.mu.Lock()
	granted, ok := k.granted[id]
	k.mu.Unlock()
	if ok {
		return granted, nil
	}
	resp, err := k.client.TimeToLive(ctx, id)
	if err != nil {
		return 0, err
	}
	if resp.TTL <= 0 { // -1: expired or revoked
		return 0, nil
	}
	k.remember(id, resp.GrantedTTL)
	return resp.GrantedTTL, nil
}

// keepAlive restarts the countdown of the lease b reuses.
func (k *keyLeases) keepAlive(ctx context.Context, b leaseBinding) error {
	if b.keepAlive == 0 {
		return nil
	}
	_, err := k.client.KeepAliveOnce(ctx, b.keepAlive)
	if isLeaseNotFound(err) {
		k.forget(b.keepAlive)
	}
	return err
}

func (k *keyLeases) remember(id clientv3.LeaseID, ttl int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.granted) >= maxKnownLeases {
		clear(k.granted)
	}
	k.granted[id] = ttl
}

func (k *keyLeases) forget(id clientv3.LeaseID) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.granted, id)
}
