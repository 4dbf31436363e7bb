package registry

import (
	"bytes"
	"context"
	"fmt"
	"minicp/registry/rest"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Delete removes an object, or marks it for deletion (rest.PlanDelete decides),
// with transactions on the mod revision it was read at, so that
// preconditions are checked against exactly the state that is changed:
//
//	If(ModRevision(key) == R).Then(Delete(key) or Put(key, marked)).Else(Get(key))
//
// An object removed is returned as its last state stamped with the
// deletion's revision, which is also the resourceVersion watchers see on
// the DELETED event. An object that stays (finalizers pending, a graceful
// deletion under way, a namespace Terminating) is returned as stored.
func (s *Store) Delete(ctx context.Context, res *Resource, namespace, name string, opts DeleteOptions) (runtime.Object, error) {
	key := KeyFor(res, namespace, name)
	state, err := s.readState(ctx, res, key)
	if err != nil {
		return nil, err
	}
	for {
		if state.obj == nil {
			return nil, notFound(res, name)
		}
		if err := checkPreconditions(res, name, key, opts.Preconditions, state.obj); err != nil {
			return nil, err
		}
		marked, step, err := s.planDelete(res, state.obj, opts)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		switch {
		case step == rest.StepNothing, opts.DryRun && step == rest.StepDeleteNow:
			return state.obj, nil
		case opts.DryRun:
			return marked, nil
		case step == rest.StepMark:
			stored, fresh, err := s.markForDeletion(ctx, res, key, state, marked)
			if fresh == nil {
				if err != nil {
					return nil, err
				}
				return stored.obj, nil
			}
			state = fresh
			continue
		}
		out, fresh, err := s.deleteKey(ctx, res, key, state)
		if fresh == nil {
			return out, err
		}
		s.log.Debug("delete lost a race, retrying", "key", key, "rev", state.rev)
		state = fresh
	}
}

// deleteKey removes key if it is still at state's revision and returns
// state's object stamped with the deletion's revision. A lost race returns
// the fresh state to decide again on.
func (s *Store) deleteKey(ctx context.Context, res *Resource, key string, state *storedState) (runtime.Object, *storedState, error) {
	return s.deleteKeyAs(ctx, res, key, state, state.data)
}

// deleteKeyAs is deleteKey returning data, an encoded object, as the
// deleted state.
func (s *Store) deleteKeyAs(ctx context.Context, res *Resource, key string, state *storedState, data []byte) (runtime.Object, *storedState, error) {
	applied, fresh, err := s.compareAndSwap(ctx, res, key, state.rev, clientv3.OpDelete(key))
	if err != nil || fresh != nil {
		return nil, fresh, storageError(err)
	}
	s.afterDelete(ctx, res, state.obj)
	out, err := s.decode(res, data, applied)
	return out, nil, err
}

// markForDeletion stores marked, the stored object stamped for deletion,
// with a compare-and-swap on the revision it was read at, and returns what
// is stored now. The key keeps its etcd lease, if any. A mark identical to
// what is stored writes nothing. A lost race returns the fresh state to
// decide again on.
func (s *Store) markForDeletion(ctx context.Context, res *Resource, key string, state *storedState, marked runtime.Object) (stored, fresh *storedState, err error) {
	data, err := s.encode(res, marked)
	if err != nil {
		return nil, nil, err
	}
	if bytes.Equal(data, state.data) {
		return state, nil, nil
	}
	applied, fresh, err := s.compareAndSwap(ctx, res, key, state.rev, clientv3.OpPut(key, string(data), clientv3.WithIgnoreLease()))
	if err != nil || fresh != nil {
		return nil, fresh, storageError(err)
	}
	out, err := s.decode(res, data, applied)
	if err != nil {
		return nil, nil, err
	}
	return &storedState{obj: out, data: data, rev: applied, lease: state.lease}, nil, nil
}

// deleteDuringUpdate removes the key an update was about to write, with a
// compare-and-swap on the revision the update read, and returns the
// update's result (data, encoded) stamped with the deletion's revision:
// the update that removes the last finalizer of an object being deleted.
func (s *Store) deleteDuringUpdate(ctx context.Context, res *Resource, key string, state *storedState, data []byte) (runtime.Object, *storedState, error) {
	out, fresh, err := s.deleteKeyAs(ctx, res, key, state, data)
	if out != nil {
		s.log.Debug("update removed the last finalizer: deleted", "key", key)
	}
	return out, fresh, err
}

// checkPreconditions enforces DeleteOptions.Preconditions (UID and
// resourceVersion) with upstream's 409 and message.
func checkPreconditions(res *Resource, name, key string, p *metav1.Preconditions, obj runtime.Object) error {
	if p == nil {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if p.UID != nil && *p.UID != m.GetUID() {
		return preconditionFailed(res, name, key,
			fmt.Sprintf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, m.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion() {
		return preconditionFailed(res, name, key,
			fmt.Sprintf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v",
				*p.ResourceVersion, m.GetResourceVersion()))
	}
	return nil
}

// planDelete decides what a DELETE with opts does to current, by res's
// strategy (rest.PlanDelete).
func (s *Store) planDelete(res *Resource, current runtime.Object, opts DeleteOptions) (runtime.Object, rest.DeleteStep, error) {
	return rest.PlanDelete(res.strategy(), current, rest.DeleteRequest{
		GracePeriodSeconds: opts.GracePeriodSeconds,
		PropagationPolicy:  opts.PropagationPolicy,
		OrphanDependents:   opts.OrphanDependents,
		GarbageCollector:   s.opts.GarbageCollector,
		Now:                s.opts.Now(),
	})
}
