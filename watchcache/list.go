package watchcache

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"minicp/registry"
)

// delegateList reports whether a LIST goes to etcd whatever the cache
// holds, as upstream decides it (shouldDelegateList): continue tokens and
// Exact reads name a past revision only etcd has; a limit with anything but
// "0" must page consistently; and consistent reads go to etcd when
// ConsistentListFromCache is off.
func (c *resourceCache) delegateList(opts registry.ListOptions) bool {
	switch {
	case opts.Continue != "":
		return true
	case opts.ResourceVersionMatch != "" && opts.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan:
		return true
	case opts.Limit > 0 && opts.ResourceVersion != "0":
		return true
	case opts.ResourceVersion == "" && !c.cfg.ConsistentListFromCache:
		return true
	}
	return false
}

// list serves a LIST (doc.go has the rules) as a typed list.
func (c *resourceCache) list(ctx context.Context, namespace string, opts registry.ListOptions) (runtime.Object, error) {
	fromEtcd, snap, err := c.answerList(ctx, namespace, opts)
	if err != nil || fromEtcd != nil {
		return fromEtcd, err
	}
	return snap.typedList(c.res)
}

// listShared serves a LIST as list does, but an answer from memory is the
// cache's own items, not a copy (registry.SharedLister).
func (c *resourceCache) listShared(ctx context.Context, namespace string, opts registry.ListOptions) (*registry.SharedList, runtime.Object, error) {
	fromEtcd, snap, err := c.answerList(ctx, namespace, opts)
	if err != nil || fromEtcd != nil {
		return nil, fromEtcd, err
	}
	shared := &registry.SharedList{ResourceVersion: snap.rv, Items: make([]runtime.CacheableObject, len(snap.elems))}
	for i, e := range snap.elems {
		shared.Items[i] = e.shared
	}
	return shared, nil, nil
}

// answerList applies the resourceVersion rules to a LIST: it is answered
// either by etcd (fromEtcd) or from memory (snap), after any wait for
// freshness the rules require.
func (c *resourceCache) answerList(ctx context.Context, namespace string, opts registry.ListOptions) (fromEtcd runtime.Object, snap *listSnapshot, err error) {
	if err := registry.ValidateListOptions(opts, false); err != nil {
		return nil, nil, err
	}
	if c.delegateList(opts) || !c.isReady() {
		fromEtcd, err = c.store.List(ctx, c.res, namespace, opts)
		return fromEtcd, nil, err
	}
	pred, err := registry.NewPredicate(c.res, opts.LabelSelector, opts.FieldSelector)
	if err != nil {
		return nil, nil, err
	}
	rv, err := registry.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, nil, err
	}
	if opts.ResourceVersion == "" {
		// A consistent read: at least etcd's revision now.
		if rv, err = c.store.CurrentRevisionOf(ctx, c.res); err != nil {
			return nil, nil, err
		}
		if err := c.waitFresh(ctx, rv); err != nil {
			if ctx.Err() != nil {
				// The request's own deadline passed while the cache
				// waited: etcd would get an expired context, and the
				// 504 must name the cache as the cause.
				return nil, nil, err
			}
			c.metrics.consistentRead(true)
			c.log.Debug("consistent list fell back to etcd", "err", err)
			fromEtcd, err = c.store.List(ctx, c.res, namespace, opts)
			return fromEtcd, nil, err
		}
		c.metrics.consistentRead(false)
	} else if err := c.waitFresh(ctx, rv); err != nil {
		return nil, nil, err
	}
	return nil, c.listFromMemory(namespace, pred, true), nil
}

// listSnapshot is a LIST answered from memory: the matching elements, in
// key order, at the cache's resourceVersion rv.
type listSnapshot struct {
	rv    int64
	elems []*element
}

// listFromMemory selects the list's elements: the namespace's key range,
// or, with useIndex, the index of a field the selector requires exactly
// (a kubelet's spec.nodeName=X). Only the snapshot
// of element pointers is taken under the lock; filtering happens outside.
// (useIndex is false only in the benchmark comparing the two.)
func (c *resourceCache) listFromMemory(namespace string, pred registry.Predicate, useIndex bool) *listSnapshot {
	prefix := registry.KeyPrefix(c.res, namespace)
	ix, value := -1, ""
	if useIndex {
		ix, value = c.indexFor(pred)
	}
	c.mu.RLock()
	rv := c.rv
	var elems []*element
	if ix >= 0 {
		elems = c.objects.inIndex(ix, value, prefix)
	} else {
		elems = c.objects.withPrefix(prefix)
	}
	c.mu.RUnlock()

	scanned := len(elems)
	if !pred.Empty() {
		matching := elems[:0] // elems is this call's own slice
		for _, e := range elems {
			if pred.Matches(e.obj) {
				matching = append(matching, e)
			}
		}
		elems = matching
	}
	index := ""
	if ix >= 0 {
		index = c.res.Indexes[ix].Field
	}
	c.metrics.list(index, scanned, len(elems))
	return &listSnapshot{rv: rv, elems: elems}
}

// typedList copies the snapshot's objects into a new list of res's list
// kind (e.g. *corev1.PodList).
func (s *listSnapshot) typedList(res *registry.Resource) (runtime.Object, error) {
	items := make([]runtime.Object, len(s.elems))
	for i, e := range s.elems {
		items[i] = e.obj
	}
	list := res.NewList()
	// SetList copies each object's struct into the list's Items; nested
	// maps and slices stay shared with the cache, which is safe because
	// the apiserver only encodes what it lists.
	if err := meta.SetList(list, items); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if err := registry.StampList(list, s.rv); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return list, nil
}

// get serves a GET: "" reads etcd (quorum), "0" whatever the cache holds,
// "N" the cache once it has reached N.
func (c *resourceCache) get(ctx context.Context, namespace, name string, opts registry.GetOptions) (runtime.Object, error) {
	if opts.ResourceVersion == "" || !c.isReady() {
		return c.store.Get(ctx, c.res, namespace, name, opts)
	}
	rv, err := registry.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	if err := c.waitFresh(ctx, rv); err != nil {
		return nil, err
	}
	c.mu.RLock()
	e := c.objects.get(registry.KeyFor(c.res, namespace, name))
	c.mu.RUnlock()
	if e == nil {
		return nil, registry.NotFound(c.res, name)
	}
	c.stats.getServed.Add(1)
	// A copy: the caller (the apiserver's encoder) may set its kind.
	return e.obj.DeepCopyObject(), nil
}
