package registry

// Keys with a TTL (Events, upstream's --event-ttl) are bound to etcd leases:
// when the lease expires, etcd deletes the key and watchers see a DELETE.
//
// Granting one lease per write would make etcd keep one lease per event, so,
// as upstream's lease manager does, a lease is shared by the writes of a short
// window: a lease is granted with TTL+window and reused while it still has at
// least TTL to live. Every key therefore lives between TTL and TTL+window
// after its last write. The window is 5% of the TTL, at most 60 s, and a
// lease carries at most 1000 keys.

import (
	"context"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

const (
	leaseReuseFraction    = 0.05
	leaseReuseMax         = 60 * time.Second
	leaseMaxAttachedCount = 1000
)

// leaseManager hands out etcd lease IDs for keys with a TTL.
type leaseManager struct {
	client *clientv3.Client
	now    func() time.Time

	// mu guards every field below; it is held across the Grant request so
	// that concurrent writers of the same window share one lease.
	mu sync.Mutex
	// current maps a TTL to the lease being reused for it.
	current map[time.Duration]*sharedLease
}

type sharedLease struct {
	id       clientv3.LeaseID
	expires  time.Time // grant time + granted TTL
	attached int       // keys bound to it so far
}

func newLeaseManager(client *clientv3.Client, now func() time.Time) *leaseManager {
	return &leaseManager{client: client, now: now, current: map[time.Duration]*sharedLease{}}
}

// reuseWindow is how much longer than ttl a shared lease is granted for.
func reuseWindow(ttl time.Duration) time.Duration {
	w := time.Duration(leaseReuseFraction * float64(ttl)).Truncate(time.Second)
	return min(w, leaseReuseMax)
}

// get returns a lease whose remaining life is between ttl and ttl+window.
func (m *leaseManager) get(ctx context.Context, ttl time.Duration) (clientv3.LeaseID, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if l := m.current[ttl]; l != nil && now.Add(ttl).Before(l.expires) && l.attached < leaseMaxAttachedCount {
		l.attached++
		return l.id, nil
	}
	granted := ttl + reuseWindow(ttl)
	resp, err := m.client.Grant(ctx, int64(granted/time.Second))
	if err != nil {
		return 0, err
	}
	m.current[ttl] = &sharedLease{id: resp.ID, expires: now.Add(granted), attached: 1}
	return resp.ID, nil
}
