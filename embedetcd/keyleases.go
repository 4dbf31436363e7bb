package embedetcd

// Which etcd lease a key is bound to, and how long that lease has left:
// `etcdctl get --write-out=json` for the lease ID, then `etcdctl lease
// timetolive` for the countdown, for many keys at once. M12 and
// M13: minicp binds each Node Lease key to an etcd lease, and these
// are the TTLs a leader change resets when checkpointing is off.

import (
	"context"
	"fmt"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
)

const (
	// keysPerTxn keeps each read of keys under etcd's default
	// --max-txn-ops (128).
	keysPerTxn = 64
	// parallelTimeToLive bounds the TimeToLive requests in flight.
	parallelTimeToLive = 16
)

// KeyLease is the etcd lease a key is bound to and what is left of it.
type KeyLease struct {
	Key string
	// Found is false when the key does not exist.
	Found bool
	// LeaseID is 0 for a key bound to no lease.
	LeaseID int64
	// GrantedTTL and TTL are in seconds: the TTL the lease was granted
	// with, and what remains of it. TTL is -1 when the lease has expired
	// or was revoked (etcd deletes its keys with it).
	GrantedTTL, TTL int64
}

// KeyLeases returns, for each key in keys and in the same order, the lease
// it is bound to and the lease's remaining TTL. The keys are read
// whole (values too), 64 to a transaction, all at one revision per transaction;
// then each distinct lease is asked its TimeToLive, 16 at a time. etcd
// answers TimeToLive on the leader (a follower forwards it), whose lessor
// holds the countdown that counts.
func KeyLeases(ctx context.Context, client *clientv3.Client, keys []string) ([]KeyLease, error) {
	out := make([]KeyLease, len(keys))
	for start := 0; start < len(keys); start += keysPerTxn {
		end := min(start+keysPerTxn, len(keys))
		ops := make([]clientv3.Op, 0, end-start)
		for _, k := range keys[start:end] {
			// Not keys-only: etcd v3.7 answers a keys-only range from its
			// in-memory index, which has no lease IDs (every Lease is 0).
			ops = append(ops, clientv3.OpGet(k))
		}
		resp, err := client.Txn(ctx).Then(ops...).Commit()
		if err != nil {
			return nil, fmt.Errorf("reading the leases of %d keys: %w", end-start, err)
		}
		for i, r := range resp.Responses {
			kl := KeyLease{Key: keys[start+i]}
			if kvs := r.GetResponseRange().GetKvs(); len(kvs) > 0 {
				kl.Found, kl.LeaseID = true, kvs[0].Lease
			}
			out[start+i] = kl
		}
	}
	ttls, err := timesToLive(ctx, client, out)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if t, ok := ttls[out[i].LeaseID]; ok {
			out[i].GrantedTTL, out[i].TTL = t.GrantedTTL, t.TTL
		}
	}
	return out, nil
}

// timesToLive asks etcd the TimeToLive of each distinct lease of leases.
func timesToLive(ctx context.Context, client *clientv3.Client, leases []KeyLease) (map[int64]*clientv3.LeaseTimeToLiveResponse, error) {
	ids := map[int64]bool{}
	for _, kl := range leases {
		if kl.LeaseID != 0 {
			ids[kl.LeaseID] = true
		}
	}
	var (
		// mu guards ttls and firstErr, written by the request goroutines.
		mu       sync.Mutex
		ttls     = make(map[int64]*clientv3.LeaseTimeToLiveResponse, len(ids))
		firstErr error
		wg       sync.WaitGroup
		// slots holds one token per request in flight.
		slots = make(chan struct{}, parallelTimeToLive)
	)
	for id := range ids {
		slots <- struct{}{}
		wg.Add(1)
		// One TimeToLive; it frees its slot and reports under mu.
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			resp, err := client.TimeToLive(ctx, clientv3.LeaseID(id))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = fmt.Errorf("asking etcd the TTL of lease %x: %w", id, err)
				}
				return
			}
			ttls[id] = resp
		}()
	}
	wg.Wait()
	return ttls, firstErr
}
