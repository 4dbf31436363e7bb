package garbagecollector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// attempt looks at one object: an owner being deleted with one of the
// collector's finalizers gets its dependents orphaned or deleted first; a
// dependent gets deleted when none of its owners exists any more.
func (c *Controller) attempt(ctx context.Context, uid types.UID) error {
	n := c.graph.get(uid)
	if n == nil {
		return nil // gone since it was queued
	}
	switch {
	case n.deleting && n.hasFinalizer(metav1.FinalizerOrphanDependents):
		return c.orphanDependents(ctx, n)
	case n.deleting && n.hasFinalizer(metav1.FinalizerDeleteDependents):
		return c.deleteDependentsFirst(ctx, n)
	case len(n.owners) > 0 && !n.deleting:
		return c.checkOwners(ctx, n)
	}
	return nil
}

// ownerState is what a quorum read says of one owner reference.
type ownerState int

const (
	ownerGone         ownerState = iota // not found, or found with another UID (recreated)
	ownerPresent                        // found with the UID the reference names
	ownerInForeground                   // found, being deleted with foregroundDeletion
)

// checkOwners reads every owner of n with a quorum read, as upstream does:
// the graph may be behind, and an owner recreated under the same name has
// another UID, so only a live read decides. n is deleted when no owner is
// left; references to owners that are gone are removed when others remain.
func (c *Controller) checkOwners(ctx context.Context, n *node) error {
	var present, gone []metav1.OwnerReference
	foreground := false
	for _, ref := range n.owners {
		state, err := c.owner(ctx, n, ref)
		if err != nil {
			return err
		}
		switch state {
		case ownerGone:
			gone = append(gone, ref)
		case ownerPresent:
			present = append(present, ref)
		case ownerInForeground:
			foreground = true
		}
	}
	switch {
	case len(present) > 0 && len(gone) > 0:
		return c.removeOwnerReferences(ctx, n, gone)
	case len(present) > 0:
		return nil
	case foreground:
		return c.deleteDependent(ctx, n, c.cascade(n))
	}
	policy := metav1.DeletePropagationBackground
	switch {
	case n.hasFinalizer(metav1.FinalizerOrphanDependents):
		policy = metav1.DeletePropagationOrphan
	case n.hasFinalizer(metav1.FinalizerDeleteDependents):
		policy = metav1.DeletePropagationForeground
	}
	return c.deleteDependent(ctx, n, policy)
}

// owner reads the owner ref names, in the dependent n's namespace when
// its kind is namespaced, with a GET without resourceVersion (a quorum
// read). A reference that cannot be satisfied in n's namespace gets
// upstream's Warning event OwnerRefInvalidNamespace on n and is treated as
// upstream treats it: an object the graph knows in another namespace
// counts as gone (n may be collected), a namespaced kind named by a
// cluster-scoped dependent cannot be resolved (n is never collected).
func (c *Controller) owner(ctx context.Context, n *node, ref metav1.OwnerReference) (ownerState, error) {
	info, ok := c.resources.Load().lookup(ref.APIVersion, ref.Kind)
	if !ok {
		return 0, fmt.Errorf("owner kind %s %s is not served: cannot tell whether %s exists", ref.APIVersion, ref.Kind, ref.Name)
	}
	namespace := n.namespace
	if !info.namespaced {
		namespace = ""
	}
	switch {
	case info.namespaced && namespace == "":
		c.invalidNamespace(n, ref)
		return ownerPresent, nil
	case info.namespaced && c.elsewhere(ref.UID, namespace):
		c.invalidNamespace(n, ref)
		return ownerGone, nil
	}
	c.metrics.ownerChecks.Inc()
	got, err := c.metadata.Resource(info.gvr).Namespace(namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return ownerGone, nil
	case err != nil:
		return 0, err
	case got.UID != ref.UID:
		return ownerGone, nil
	case got.DeletionTimestamp != nil && slices.Contains(got.Finalizers, metav1.FinalizerDeleteDependents):
		return ownerInForeground, nil
	}
	return ownerPresent, nil
}

// deleteDependent deletes n with policy, only if it is still the object
// with n's UID.
func (c *Controller) deleteDependent(ctx context.Context, n *node, policy metav1.DeletionPropagation) error {
	c.log.Debug("garbage collector: deleting dependent", "resource", n.gvr.Resource, "namespace", n.namespace, "name", n.name, "propagation", policy)
	c.metrics.deletes.WithLabelValues(string(policy)).Inc()
	uid := n.uid
	err := c.metadata.Resource(n.gvr).Namespace(n.namespace).Delete(ctx, n.name, metav1.DeleteOptions{
		Preconditions:     &metav1.Preconditions{UID: &uid},
		PropagationPolicy: &policy,
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone already, or another object now has the name
	}
	return err
}

// cascade is how a dependent of an owner deleted in foreground is deleted,
// as upstream does it: in foreground too when it has dependents of its own
// (so that theirs go first), else in background, which costs one write
// instead of two.
func (c *Controller) cascade(n *node) metav1.DeletionPropagation {
	if len(c.graph.dependents(n.uid)) > 0 {
		return metav1.DeletePropagationForeground
	}
	return metav1.DeletePropagationBackground
}

// deleteDependentsFirst handles an owner deleted in foreground: its
// dependents are deleted (in foreground when they own others), and its
// foregroundDeletion finalizer is removed once no dependent that blocks
// owner deletion is left.
func (c *Controller) deleteDependentsFirst(ctx context.Context, owner *node) error {
	blocking := 0
	var errs []error
	for _, d := range c.graph.dependents(owner.uid) {
		if d.ref.BlockOwnerDeletion != nil && *d.ref.BlockOwnerDeletion {
			blocking++
		}
		if !d.deleting {
			errs = append(errs, c.deleteDependent(ctx, &d.node, c.cascade(&d.node)))
		}
	}
	if err := errors.Join(errs...); err != nil || blocking > 0 {
		return err // the dependents' deletions queue the owner again
	}
	return c.removeFinalizer(ctx, owner, metav1.FinalizerDeleteDependents)
}

// orphanDependents handles an owner deleted with the orphan policy: every
// dependent loses its reference to the owner, then the owner loses its
// orphan finalizer, which deletes it.
func (c *Controller) orphanDependents(ctx context.Context, owner *node) error {
	var errs []error
	for _, d := range c.graph.dependents(owner.uid) {
		errs = append(errs, c.removeOwnerReferences(ctx, &d.node, []metav1.OwnerReference{d.ref}))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return c.removeFinalizer(ctx, owner, metav1.FinalizerOrphanDependents)
}

// removeOwnerReferences takes refs out of n's ownerReferences.
func (c *Controller) removeOwnerReferences(ctx context.Context, n *node, refs []metav1.OwnerReference) error {
	return c.patchMetadata(ctx, n, func(m *metav1.ObjectMeta) bool {
		kept := slices.DeleteFunc(slices.Clone(m.OwnerReferences), func(r metav1.OwnerReference) bool {
			return slices.ContainsFunc(refs, func(x metav1.OwnerReference) bool { return x.UID == r.UID })
		})
		if len(kept) == len(m.OwnerReferences) {
			return false
		}
		c.metrics.orphaned.Add(float64(len(m.OwnerReferences) - len(kept)))
		m.OwnerReferences = kept
		return true
	})
}

// removeFinalizer takes finalizer out of n's finalizers; when it was the
// last one of an object being deleted, the apiserver deletes the object.
func (c *Controller) removeFinalizer(ctx context.Context, n *node, finalizer string) error {
	return c.patchMetadata(ctx, n, func(m *metav1.ObjectMeta) bool {
		kept := slices.DeleteFunc(slices.Clone(m.Finalizers), func(f string) bool { return f == finalizer })
		if len(kept) == len(m.Finalizers) {
			return false
		}
		c.metrics.finalizers.WithLabelValues(finalizer).Inc()
		m.Finalizers = kept
		return true
	})
}

// patchMetadata reads n with a quorum read, lets change edit its metadata,
// and writes the change back as a merge patch carrying the resourceVersion
// it read: a concurrent write makes it fail with 409 and the object is
// looked at again. An object that is gone, or has another UID, is left.
func (c *Controller) patchMetadata(ctx context.Context, n *node, change func(*metav1.ObjectMeta) bool) error {
	client := c.metadata.Resource(n.gvr).Namespace(n.namespace)
	cur, err := client.Get(ctx, n.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || (err == nil && cur.UID != n.uid) {
		return nil
	}
	if err != nil {
		return err
	}
	m := cur.ObjectMeta
	if !change(&m) {
		return nil
	}
	patch := map[string]any{"metadata": map[string]any{
		"resourceVersion": cur.ResourceVersion,
		"ownerReferences": nonNil(m.OwnerReferences),
		"finalizers":      nonNil(m.Finalizers),
	}}
	body, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	_, err = client.Patch(ctx, n.name, types.MergePatchType, body, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// nonNil makes an empty list a JSON [] (a merge patch's null would mean
// "delete the field", which is the same here, but [] reads plainly).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// elsewhere reports whether the graph knows the object uid in a namespace
// other than namespace.
func (c *Controller) elsewhere(uid types.UID, namespace string) bool {
	o := c.graph.get(uid)
	return o != nil && o.namespace != namespace
}

// invalidNamespace records upstream's Warning on dependent n: its owner
// reference cannot be satisfied in its namespace.
func (c *Controller) invalidNamespace(n *node, ref metav1.OwnerReference) {
	c.log.Info("garbage collector: owner reference names no object in the dependent's namespace", "resource", n.gvr.Resource, "namespace", n.namespace, "name", n.name, "owner", ref.Name)
	if c.cfg.Recorder == nil {
		return
	}
	regarding := &corev1.ObjectReference{
		APIVersion: n.gvr.GroupVersion().String(), Kind: c.resources.Load().kindOf(n.gvr), Namespace: n.namespace, Name: n.name, UID: n.uid,
	}
	c.cfg.Recorder.Eventf(regarding, nil, corev1.EventTypeWarning, ReasonOwnerRefInvalidNamespace, "GarbageCollect",
		"ownerRef [%s/%s, namespace: %s, name: %s, uid: %s] does not exist in namespace %q", ref.APIVersion, ref.Kind, n.namespace, ref.Name, ref.UID, n.namespace)
}
