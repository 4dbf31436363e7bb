package registry

import (
	"bytes"
	"context"
	"errors"
	"minicp/registry/rest"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// generateNameAttempts bounds the retries of a create whose generated name
// was already taken (upstream retries too, then gives up).
const generateNameAttempts = 8

// Create stores a new object with one etcd transaction:
//
//	If(CreateRevision(key) == 0).Then(Put(key, value))
//
// so that of two concurrent creates exactly one succeeds; the other gets 409
// AlreadyExists. The object is returned as stored, with its resourceVersion
// set to the transaction's revision.
func (s *Store) Create(ctx context.Context, res *Resource, namespace string, obj runtime.Object, opts WriteOptions) (runtime.Object, error) {
	obj = obj.DeepCopyObject()
	if rev, err := objectRevision(obj); err != nil {
		return nil, err
	} else if rev != 0 {
		return nil, apierrors.NewInternalError(errors.New("resourceVersion should not be set on objects to be created"))
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	nameIsGenerated := m.GetName() == "" && m.GetGenerateName() != ""
	if err := rest.BeforeCreate(res.target(), namespace, obj, s.opts.Now()); err != nil {
		return nil, err
	}
	done, err := s.beginWrite(ctx, res, obj, nil, opts.DryRun)
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		out, err := s.create(ctx, res, obj, opts)
		if !nameIsGenerated || !apierrors.IsAlreadyExists(err) || attempt == generateNameAttempts {
			done(ctx, err == nil)
			return out, err
		}
		m.SetName("")
		rest.GenerateName(m)
	}
}

// appliedAt reads key back after etcd answered a write with NOSPACE: the
// revision etcd stored data at, if it did (the key holds data at a revision
// other than prevRev), 0 if it did not, -1 if the read failed.
func (s *Store) appliedAt(ctx context.Context, key string, data []byte, prevRev int64) int64 {
	resp, err := s.client.Get(ctx, key)
	if err != nil {
		return -1
	}
	if len(resp.Kvs) == 1 && resp.Kvs[0].ModRevision != prevRev && bytes.Equal(resp.Kvs[0].Value, data) {
		return resp.Kvs[0].ModRevision
	}
	return 0
}

// create writes obj, already prepared and validated, if its key is free.
func (s *Store) create(ctx context.Context, res *Resource, obj runtime.Object, opts WriteOptions) (runtime.Object, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	key := KeyFor(res, m.GetNamespace(), m.GetName())
	data, err := s.encode(res, obj)
	if err != nil {
		return nil, err
	}
	if err := s.checkSize(key, data); err != nil {
		return nil, err
	}
	if opts.DryRun {
		resp, err := s.client.Get(ctx, key, clientv3.WithCountOnly())
		if err != nil {
			return nil, storageError(err)
		}
		if resp.Count > 0 {
			return nil, alreadyExists(res, m.GetName())
		}
		return obj, nil
	}
	lease, err := s.leaseFor(ctx, res, obj, 0)
	if err != nil {
		return nil, err
	}
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(data), lease.opts...)).
		Commit()
	if isNoSpace(err) {
		return nil, noSpaceWrite(err, s.appliedAt(ctx, key, data, 0))
	}
	if err != nil {
		return nil, storageError(err)
	}
	if !resp.Succeeded {
		return nil, alreadyExists(res, m.GetName())
	}
	return s.decode(res, data, resp.Header.Revision)
}
