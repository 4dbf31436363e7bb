package registry

// The Store's side of Strategy.BeginWrite and Strategy.AfterDelete: a kind
// whose writes take something kept outside its object (a Service's
// ClusterIP and NodePorts, package kinds) takes it after validation and
// before its etcd transaction, and gives it back if the transaction does
// not happen; a delete gives back what the deleted object held. A dry run
// takes nothing. The Store knows nothing of what is taken: it only calls
// the hooks at the right moments with a HookEnv.

import (
	"context"
	"minicp/registry/rest"

	"k8s.io/apimachinery/pkg/runtime"
)

// noHook is the done of a write whose kind has no BeginWrite.
func noHook(context.Context, bool) {}

// hookEnv is what the Store hands its hooks.
func (s *Store) hookEnv() rest.HookEnv {
	return rest.HookEnv{KV: s.client, StorageMediaType: s.opts.StorageMediaType}
}

// beginWrite runs res's Strategy.BeginWrite for a write of obj over old
// (nil on create).
func (s *Store) beginWrite(ctx context.Context, res *Resource, obj, old runtime.Object, dryRun bool) (func(context.Context, bool), error) {
	st := res.strategy()
	if st.BeginWrite == nil || dryRun {
		return noHook, nil
	}
	return st.BeginWrite(ctx, s.hookEnv(), obj, old)
}

// afterDelete runs res's Strategy.AfterDelete for a deleted object.
func (s *Store) afterDelete(ctx context.Context, res *Resource, deleted runtime.Object) {
	if st := res.strategy(); st.AfterDelete != nil {
		st.AfterDelete(ctx, s.hookEnv(), deleted)
	}
}
