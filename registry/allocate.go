package registry

// The Store's side of Strategy.Allocate and Strategy.Release: a write that
// takes values from the stack's ranges (a Service's ClusterIP and
// NodePorts) takes them after validation and before its etcd transaction,
// and gives them back if the transaction does not happen; a delete gives
// back what the deleted object held. A dry run takes nothing.

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
)

// noAllocation is the done of a write that allocated nothing.
func noAllocation(context.Context, bool) {}

// allocate runs res's Strategy.Allocate for a write of obj over old (nil
// on create).
func (s *Store) allocate(ctx context.Context, res *Resource, obj, old runtime.Object, dryRun bool) (func(context.Context, bool), error) {
	st := res.strategy()
	if st.Allocate == nil || dryRun {
		return noAllocation, nil
	}
	return st.Allocate(ctx, s.allocs, obj, old)
}

// release runs res's Strategy.Release for a deleted object.
func (s *Store) release(ctx context.Context, res *Resource, deleted runtime.Object) {
	if st := res.strategy(); st.Release != nil {
		st.Release(ctx, s.allocs, deleted)
	}
}
