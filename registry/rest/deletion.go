package rest

// How a DELETE decides, for every kind, as upstream's generic store and
// its BeforeDelete do. An object leaves etcd in one of three ways:
//
//   - at once: no finalizers, no grace period: one etcd delete, one
//     DELETED event;
//   - marked first: the object has finalizers (or gets one from the
//     propagation policy: "orphan", "foregroundDeletion"), so the DELETE
//     stores it with metadata.deletionTimestamp = now and
//     deletionGracePeriodSeconds = 0 and it stays, Terminating, until the
//     update that removes its last finalizer deletes it in the same
//     compare-and-swap transaction (the Store's update): MODIFIED, then DELETED;
//   - gracefully: a kind whose strategy has GracePeriod (pods) is stored
//     with deletionTimestamp = now + grace and deletionGracePeriodSeconds =
//     grace; whoever runs it (a kubelet) finishes with a DELETE of grace 0.
//     A grace of 0 deletes the key at once, with one write. (Upstream's
//     store writes the mark first and then deletes: two writes, MODIFIED
//     then DELETED; minicp spares the first, so every DELETE that removes
//     an object is one etcd write and one watch event.)
//
// Once deletion has started, finalizers can only be removed (422 on an
// update adding one, from the metadata validation), and a DELETE may only
// shorten a pending grace period.

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// GCPolicy is what a DELETE that names no propagation policy does with
// the object's dependents (upstream's DefaultGarbageCollectionPolicy).
type GCPolicy int

const (
	// GCBackground deletes the owner at once; the garbage collector deletes
	// the dependents after. The default of almost every kind.
	GCBackground GCPolicy = iota
	// GCOrphan adds the "orphan" finalizer: the garbage collector removes
	// the owner's references from its dependents, then the finalizer. The
	// legacy default of core/v1 ReplicationControllers and batch/v1 Jobs.
	GCOrphan
	// GCUnsupported: DELETE never adds the garbage collector's finalizers.
	GCUnsupported
)

// DeleteStep is what one round of a DELETE does to the stored object.
type DeleteStep int

const (
	StepDeleteNow DeleteStep = iota // remove the key
	StepMark                        // store the marked object; it stays
	StepNothing                     // change nothing: deletion is already under way
)

// DeleteRequest is what a DELETE asks, and the moment it is decided at.
type DeleteRequest struct {
	// GracePeriodSeconds is the request's grace period; nil: the object's own.
	GracePeriodSeconds *int64
	// PropagationPolicy and the older OrphanDependents say what happens
	// to the object's dependents; nil: the kind's default (GCPolicy).
	PropagationPolicy *metav1.DeletionPropagation
	OrphanDependents  *bool
	// GarbageCollector says a garbage collector runs: only then are its
	// finalizers added, since nobody else would ever remove them.
	GarbageCollector bool
	Now              time.Time
}

// PlanDelete decides what a DELETE does to current (which it does not
// modify), by st's rules. It returns the object to store for StepMark.
func PlanDelete(st *Strategy, current runtime.Object, opts DeleteRequest) (runtime.Object, DeleteStep, error) {
	obj := current.DeepCopyObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, 0, err
	}
	now := opts.Now
	if st.GracefulDelete != nil {
		switch st.GracefulDelete(obj, now) {
		case DeleteWait:
			return current, StepNothing, nil
		case DeleteMark:
			setGCFinalizers(st, m, opts)
			return obj, StepMark, nil
		}
	}
	graceful, pending, period := beforeDelete(st, obj, m, opts.GracePeriodSeconds, now)
	if pending {
		return current, StepNothing, nil
	}
	setGCFinalizers(st, m, opts)
	finalizers := len(m.GetFinalizers()) > 0
	switch {
	case graceful && (period > 0 || finalizers):
		return obj, StepMark, nil
	case finalizers:
		markAsDeleting(m, now)
		return obj, StepMark, nil
	}
	return current, StepDeleteNow, nil
}

// beforeDelete applies a kind's graceful deletion to m (upstream's
// BeforeDelete). graceful: m was stamped with a deletion time period
// seconds from now. pending: a graceful deletion is under way and the
// request does not shorten it.
func beforeDelete(st *Strategy, obj runtime.Object, m metav1.Object, requested *int64, now time.Time) (graceful, pending bool, period int64) {
	if requested != nil && *requested < 0 {
		one := int64(1) // negative periods mean 1s on the delete path, as upstream
		requested = &one
	}
	if m.GetDeletionTimestamp() != nil {
		current := m.GetDeletionGracePeriodSeconds()
		if current == nil || *current == 0 {
			return false, false, 0 // marked for finalizers, or a mark whose delete failed: go on
		}
		if requested == nil || *requested >= *current {
			return false, true, 0 // only a shorter grace period changes anything
		}
		period = *requested
		at := m.GetDeletionTimestamp().Add(time.Duration(*requested-*current) * time.Second)
		if at.Before(now) {
			at = now
			if period != 0 {
				period = 1 // still graceful: whoever runs it finishes the delete
			}
		}
		stamp := metav1.NewTime(at)
		m.SetDeletionTimestamp(&stamp)
		m.SetDeletionGracePeriodSeconds(&period)
		return true, false, period
	}
	if st.GracePeriod == nil {
		return false, false, 0
	}
	period = st.GracePeriod(obj, requested)
	stamp := metav1.NewTime(now.Add(time.Duration(period) * time.Second))
	m.SetDeletionTimestamp(&stamp)
	m.SetDeletionGracePeriodSeconds(&period)
	if m.GetGeneration() > 0 {
		m.SetGeneration(m.GetGeneration() + 1)
	}
	return true, false, period
}

// markAsDeleting stamps an object kept by its finalizers: deletionTimestamp
// now (unless an earlier one is there) and deletionGracePeriodSeconds 0, the
// sign for the update removing the last finalizer to delete it.
func markAsDeleting(m metav1.Object, now time.Time) {
	ts := m.GetDeletionTimestamp()
	if ts == nil && m.GetGeneration() > 0 {
		m.SetGeneration(m.GetGeneration() + 1)
	}
	if ts == nil || ts.After(now) {
		stamp := metav1.NewTime(now)
		m.SetDeletionTimestamp(&stamp)
	}
	zero := int64(0)
	m.SetDeletionGracePeriodSeconds(&zero)
}

// setGCFinalizers adds or removes the garbage collector's finalizers as
// the request's propagation policy, the object's finalizers and the kind's
// default ask (upstream's deletionFinalizersForGarbageCollection). Nothing
// changes when no garbage collector runs: nobody would remove them.
func setGCFinalizers(st *Strategy, m metav1.Object, opts DeleteRequest) {
	if !opts.GarbageCollector || st.DefaultGCPolicy == GCUnsupported {
		return
	}
	orphan, foreground := propagation(st.DefaultGCPolicy, m.GetFinalizers(), opts)
	var kept []string
	for _, f := range m.GetFinalizers() {
		if f != metav1.FinalizerOrphanDependents && f != metav1.FinalizerDeleteDependents {
			kept = append(kept, f)
		}
	}
	if orphan {
		kept = append(kept, metav1.FinalizerOrphanDependents)
	}
	if foreground {
		kept = append(kept, metav1.FinalizerDeleteDependents)
	}
	if !sameSet(kept, m.GetFinalizers()) {
		m.SetFinalizers(kept)
	}
}

// propagation resolves what happens to dependents: the request's
// orphanDependents or propagationPolicy first, then a GC finalizer the
// object already carries, then the kind's default.
func propagation(def GCPolicy, finalizers []string, opts DeleteRequest) (orphan, foreground bool) {
	if opts.OrphanDependents != nil {
		return *opts.OrphanDependents, false
	}
	if p := opts.PropagationPolicy; p != nil {
		switch *p {
		case metav1.DeletePropagationOrphan:
			return true, false
		case metav1.DeletePropagationForeground:
			return false, true
		case metav1.DeletePropagationBackground:
			return false, false
		}
	}
	for _, f := range finalizers {
		switch f {
		case metav1.FinalizerOrphanDependents:
			return true, false
		case metav1.FinalizerDeleteDependents:
			return false, true
		}
	}
	return def == GCOrphan, false
}

// ShouldDeleteDuringUpdate reports whether an update of old into obj deletes
// the object instead of storing it: old was marked for deletion with no
// grace period left and obj has no finalizers (upstream's
// ShouldDeleteDuringUpdate), and the kind agrees (namespaces also wait for
// spec.finalizers).
func ShouldDeleteDuringUpdate(st *Strategy, obj, old runtime.Object) bool {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	oldMeta, err := meta.Accessor(old)
	if err != nil || len(m.GetFinalizers()) > 0 || oldMeta.GetDeletionTimestamp() == nil {
		return false
	}
	if g := oldMeta.GetDeletionGracePeriodSeconds(); g != nil && *g != 0 {
		return false
	}
	return st.DeleteDuringUpdate == nil || st.DeleteDuringUpdate(obj, old)
}

// sameSet reports whether a and b hold the same strings.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	in := make(map[string]bool, len(a))
	for _, x := range a {
		in[x] = true
	}
	for _, x := range b {
		if !in[x] {
			return false
		}
	}
	return true
}
