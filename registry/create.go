package registry

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
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
	if err := s.beforeCreate(res, namespace, obj); err != nil {
		return nil, err
	}
	if res.Namespaced {
		if err := s.namespaceLifecycle(ctx, res, m.GetNamespace()); err != nil {
			return nil, err
		}
	}
	for attempt := 1; ; attempt++ {
		out, err := s.create(ctx, res, obj, opts)
		if !nameIsGenerated || !apierrors.IsAlreadyExists(err) || attempt == generateNameAttempts {
			return out, err
		}
		m.SetName("")
		generateName(m)
	}
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
	if err != nil {
		return nil, storageError(err)
	}
	if !resp.Succeeded {
		return nil, alreadyExists(res, m.GetName())
	}
	return s.decode(res, data, resp.Header.Revision)
}

// namespaceLifecycle refuses to create objects in a namespace that does not
// exist (404 `namespaces "foo" not found`) or is being deleted (403). This is
// upstream's NamespaceLifecycle admission plugin; it lives here until minicp
// has admission plugins. Like upstream's, it is a separate read, not part of
// the create's transaction.
func (s *Store) namespaceLifecycle(ctx context.Context, res *Resource, namespace string) error {
	nsRes, _ := Lookup(corev1.SchemeGroupVersion.WithResource("namespaces"))
	resp, err := s.client.Get(ctx, KeyFor(nsRes, "", namespace))
	if err != nil {
		return storageError(err)
	}
	if len(resp.Kvs) == 0 {
		return notFound(nsRes, namespace)
	}
	ns, err := s.decode(nsRes, resp.Kvs[0].Value, resp.Kvs[0].ModRevision)
	if err != nil {
		return err
	}
	if ns.(*corev1.Namespace).DeletionTimestamp != nil {
		return apierrors.NewForbidden(qualifiedResource(res), "",
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", namespace))
	}
	return nil
}
