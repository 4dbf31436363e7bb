package registry

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// compareAndSwap runs op (a Put or a Delete of key) only if key is still at
// revision rev, in one etcd transaction:
//
//	If(ModRevision(key) == rev).Then(op).Else(Get(key))
//
// This is how every update and delete keeps optimistic concurrency (M4):
// the write applies to exactly the state it was computed from, or not at
// all. When op ran, applied is the transaction's revision (the new
// resourceVersion). When another write won, fresh is the key's state now
// (an empty state if the key is gone), to decide again on. err is etcd's
// error as it came, for the caller to translate (errors.go): an update
// looks at it first (a revoked lease, NOSPACE).
func (s *Store) compareAndSwap(ctx context.Context, res *Resource, key string, rev int64, op clientv3.Op) (applied int64, fresh *storedState, err error) {
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", rev)).
		Then(op).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return 0, nil, err
	}
	if !resp.Succeeded {
		fresh, err := s.stateFrom(res, resp.Responses[0].GetResponseRange().Kvs)
		return 0, fresh, err
	}
	return resp.Header.Revision, nil, nil
}
