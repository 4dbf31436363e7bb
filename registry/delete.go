package registry

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Delete removes an object with a transaction on the mod revision it was
// read at, so that preconditions are checked against exactly the state that
// gets deleted:
//
//	If(ModRevision(key) == R).Then(Delete(key)).Else(Get(key))
//
// It returns the last state stamped with the deletion's revision, which is
// also the resourceVersion watchers see on the DELETED event.
//
// Namespaces are deleted in steps (namespace.go): the first DELETE only
// marks them Terminating, and is answered with the marked namespace. Other
// resources are deleted at once: minicp has no graceful pod deletion and
// no metadata.finalizers handling.
func (s *Store) Delete(ctx context.Context, res *Resource, namespace, name string, opts DeleteOptions) (runtime.Object, error) {
	key := KeyFor(res, namespace, name)
	state, err := s.readState(ctx, res, key)
	if err != nil {
		return nil, err
	}
	graceful := res.strategy().GracefulDelete
	for {
		if state.obj == nil {
			return nil, notFound(res, name)
		}
		if err := checkPreconditions(res, name, key, opts.Preconditions, state.obj); err != nil {
			return nil, err
		}
		action := DeleteNow
		marked := state.obj.DeepCopyObject()
		if graceful != nil {
			action = graceful(marked, s.opts.Now())
		}
		switch {
		case action == DeleteWait, opts.DryRun && action == DeleteNow:
			return state.obj, nil
		case opts.DryRun:
			return marked, nil
		case action == DeleteMark:
			out, fresh, err := s.markForDeletion(ctx, res, key, state, marked)
			if fresh == nil {
				return out, err
			}
			state = fresh
			continue
		}
		resp, err := s.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", state.rev)).
			Then(clientv3.OpDelete(key)).
			Else(clientv3.OpGet(key)).
			Commit()
		if err != nil {
			return nil, storageError(err)
		}
		if resp.Succeeded {
			return s.decode(res, state.data, resp.Header.Revision)
		}
		s.log.Debug("delete lost a race, retrying", "key", key, "rev", state.rev)
		if state, err = s.stateFrom(res, resp.Responses[0].GetResponseRange().Kvs); err != nil {
			return nil, err
		}
	}
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
