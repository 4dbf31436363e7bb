package registry

import (
	"bytes"
	"context"
	"fmt"
	"minicp/registry/rest"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// storedState is what a key holds at one revision.
type storedState struct {
	obj  runtime.Object // decoded and stamped with rev; nil when the key is absent
	data []byte
	rev  int64 // the key's mod revision; 0 when absent
	// lease is the etcd lease the key is bound to; 0 for none.
	lease clientv3.LeaseID
	// guessed marks a state read from the local member only (serializable):
	// possibly stale, good for a compare-and-swap, not for a decision.
	guessed bool
}

// stateFrom decodes the result of a single-key read.
func (s *Store) stateFrom(res *Resource, kvs []*mvccpb.KeyValue) (*storedState, error) {
	if len(kvs) == 0 {
		return &storedState{}, nil
	}
	obj, err := s.decode(res, kvs[0].Value, kvs[0].ModRevision)
	if err != nil {
		return nil, err
	}
	return &storedState{obj: obj, data: kvs[0].Value, rev: kvs[0].ModRevision, lease: clientv3.LeaseID(kvs[0].Lease)}, nil
}

// readState reads a key's current state with a quorum read.
func (s *Store) readState(ctx context.Context, res *Resource, key string) (*storedState, error) {
	resp, err := s.client.Get(ctx, key)
	if err != nil {
		return nil, storageError(err)
	}
	return s.stateFrom(res, resp.Kvs)
}

// guessState reads a key's state from the etcd member the client talks to,
// without a quorum read: no Raft round trip, but possibly behind.
func (s *Store) guessState(ctx context.Context, res *Resource, key string) (*storedState, error) {
	resp, err := s.client.Get(ctx, key, clientv3.WithSerializable())
	if err != nil {
		return nil, storageError(err)
	}
	state, err := s.stateFrom(res, resp.Kvs)
	if err != nil {
		return nil, err
	}
	state.guessed = true
	return state, nil
}

// confirm is how a round that was decided on a guessed state without a
// transaction ends: with a quorum read, so that the next round decides on
// the current state.
func (s *Store) confirm(ctx context.Context, res *Resource, key string) (runtime.Object, bool, *storedState, error) {
	fresh, err := s.readState(ctx, res, key)
	return nil, false, fresh, err
}

// Update is optimistic concurrency on the key's mod revision (M4). It reads the current state at revision R, lets tryUpdate compute
// the new object, then writes with one transaction:
//
//	If(ModRevision(key) == R).Then(Put(key, new)).Else(Get(key))
//
// When another write got in between, the Else branch hands back the fresh
// state and the loop runs again. A new object that carries a resourceVersion
// must carry R itself, or the update fails with 409 Conflict; one without a
// resourceVersion is applied to whatever is current. An update that would
// store identical bytes writes nothing and returns the stored object.
//
// R is first read from the local etcd member only (a serializable read, no
// Raft round trip): a guess, which the transaction's compare checks. A
// round that would end without a transaction on a guessed state (an error
// such as 409 or 404, a dry run, or nothing to write) reads the key again
// with a quorum read and runs once more, so nothing is decided on a stale
// state. Upstream's storage does the same with the watch cache's copy of
// the object as its guess. For a heartbeat, this spares a quorum read per
// renewal.
func (s *Store) Update(ctx context.Context, res *Resource, namespace, name string, opts UpdateOptions, tryUpdate UpdateFunc) (runtime.Object, bool, error) {
	key := KeyFor(res, namespace, name)
	state, err := s.guessState(ctx, res, key)
	if err != nil {
		return nil, false, err
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, false, storageError(err)
		}
		out, created, fresh, err := s.tryUpdateOnce(ctx, res, key, namespace, name, opts, tryUpdate, state)
		if fresh == nil {
			return out, created, err
		}
		s.log.Debug("update lost a race, retrying", "key", key, "rev", state.rev, "current", fresh.rev)
		state = fresh
	}
}

// tryUpdateOnce runs one read-modify-write round against state. It returns
// a non-nil fresh state when the compare-and-swap failed and the round must
// be run again.
func (s *Store) tryUpdateOnce(ctx context.Context, res *Resource, key, namespace, name string, opts UpdateOptions,
	tryUpdate UpdateFunc, state *storedState) (out runtime.Object, created bool, fresh *storedState, err error) {
	creating := state.obj == nil
	if creating && !res.AllowCreateOnUpdate && !opts.AllowCreate {
		if state.guessed {
			return s.confirm(ctx, res, key)
		}
		return nil, false, nil, notFound(res, name)
	}
	newObj, err := s.computeUpdate(res, namespace, name, opts, tryUpdate, state)
	if err != nil {
		if state.guessed {
			return s.confirm(ctx, res, key)
		}
		return nil, false, nil, err
	}
	data, err := s.encode(res, newObj)
	if err != nil {
		return nil, false, nil, err
	}
	if state.guessed && (opts.DryRun || (!creating && bytes.Equal(data, state.data))) {
		return s.confirm(ctx, res, key)
	}
	if !creating && bytes.Equal(data, state.data) {
		return state.obj, false, nil, nil
	}
	if err := s.checkSize(key, data); err != nil {
		return nil, false, nil, err
	}
	if opts.DryRun {
		if !creating {
			if err := stampObject(newObj, state.rev); err != nil {
				return nil, false, nil, apierrors.NewInternalError(err)
			}
		}
		return newObj, creating, nil, nil
	}
	if !creating && rest.ShouldDeleteDuringUpdate(res.strategy(), newObj, state.obj) {
		out, fresh, err := s.deleteDuringUpdate(ctx, res, key, state, data)
		return out, false, fresh, err
	}
	done, err := s.beginWrite(ctx, res, newObj, state.obj, false)
	if err != nil {
		return nil, false, nil, err
	}
	written := false
	defer func() { done(ctx, written) }()
	if res.strategy().BeginWrite != nil {
		// What the hook gave (a Service's NodePort) is part of the object.
		if data, err = s.encode(res, newObj); err != nil {
			return nil, false, nil, err
		}
	}
	lease, err := s.leaseFor(ctx, res, newObj, state.lease)
	if err != nil {
		return nil, false, nil, err
	}
	leaseLost := s.renewLease(ctx, key, lease)
	applied, fresh, err := s.compareAndSwap(ctx, res, key, state.rev, clientv3.OpPut(key, string(data), lease.opts...))
	lost := leaseLost()
	refused := isLeaseNotFound(err) // the lease was revoked before the write
	if isNoSpace(err) {
		return nil, false, nil, noSpaceWrite(err, s.appliedAt(ctx, key, data, state.rev))
	}
	if err != nil && !refused {
		return nil, false, nil, storageError(err)
	}
	if !refused && fresh != nil {
		return nil, false, fresh, nil
	}
	if lost || refused {
		// The lease had run out just before the write: etcd either refused
		// the write (its lease was already revoked) or applied it and then
		// deleted the key with the lease. Write again, onto a fresh lease.
		fresh, err := s.readState(ctx, res, key)
		if err != nil {
			return nil, false, nil, err
		}
		return nil, false, fresh, nil
	}
	written = true
	out, err = s.decode(res, data, applied)
	return out, creating, nil, err
}

// computeUpdate calls tryUpdate on a copy of the current object and applies
// the conflict rule and the strategy to what it returns.
func (s *Store) computeUpdate(res *Resource, namespace, name string, opts UpdateOptions, tryUpdate UpdateFunc,
	state *storedState) (runtime.Object, error) {
	var current runtime.Object
	if state.obj != nil {
		current = state.obj.DeepCopyObject()
	}
	newObj, err := tryUpdate(current)
	if err != nil {
		return nil, err
	}
	if newObj == nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("update of %s %q produced no object", res.Name, name))
	}
	// tryUpdate may hand back the same object on every round; never modify it.
	newObj = newObj.DeepCopyObject()
	m, err := meta.Accessor(newObj)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if m.GetName() != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), name))
	}
	newRev, err := objectRevision(newObj)
	if err != nil {
		return nil, err
	}
	if state.obj == nil {
		if err := clearResourceVersion(newObj); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		return newObj, rest.BeforeCreate(res.target(), namespace, newObj, s.opts.Now())
	}
	switch newRev {
	case 0: // unconditional: applies to whatever is current
		if err := stampObject(newObj, state.rev); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
	case state.rev:
	default:
		return nil, conflict(res, name)
	}
	return newObj, rest.BeforeUpdate(res.target(), newObj, state.obj, opts.Subresource)
}
