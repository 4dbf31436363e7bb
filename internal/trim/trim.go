// Package trim drops metadata.managedFields from objects, for the two
// places minicp does without them:
//
//   - minicp's controllers drop them from every object their informers
//     receive before caching it, as kube-controller-manager does to its
//     informers' objects (ManagedFields). No controller reads them, and
//     they are often the largest part of an object's metadata (a Lease's
//     entry is about as large as the rest of it), so keeping them would
//     cost every controller's cache memory for nothing. A controller that
//     writes back an object from its cache sends no managedFields; the
//     apiserver then keeps the stored ones, as upstream's field manager
//     does for a request without them.
//   - the apiserver drops them from a write the store refused as too
//     large, and tries once more, as upstream does (DropManagedFields).
package trim

import "k8s.io/apimachinery/pkg/api/meta"

// ManagedFields drops obj's managedFields; it is a cache.TransformFunc
// (informers.WithTransform, SharedIndexInformer.SetTransform). Objects
// without metadata (a tombstone) pass unchanged.
func ManagedFields(obj any) (any, error) {
	DropManagedFields(obj)
	return obj, nil
}

// DropManagedFields drops obj's managedFields, when it has metadata.
func DropManagedFields(obj any) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
}
