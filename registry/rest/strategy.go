package rest

// Strategies are what differs between resources, as in upstream's
// pkg/registry/<group>/<resource>/strategy.go: defaulting, validation, and
// which parts of an object a write may change. The generic steps around
// them (system fields, name generation, immutable metadata) are in
// metadata.go.

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Strategy holds one resource's rules, as upstream's per-resource
// strategies do. Every function is optional (nil: nothing to do); the
// Store runs them around the generic steps below, in this order:
//
//	create: namespace, PrepareForCreate, system fields (UID, creation
//	        time), name generation, metadata validation + Validate +
//	        ValidateCreate, Canonicalize.
//	update: namespace, generation carried over, PrepareForUpdate (main
//	        resource) or PrepareForStatusUpdate (status subresource) or
//	        PrepareForFinalize (finalize subresource), system fields
//	        carried over, metadata validation + Validate + ValidateUpdate
//	        (or ValidateStatusUpdate alone on /status, when set),
//	        Canonicalize.
//
// A request can never set metadata.generation: it is carried over from the
// stored object on update and starts at 0 on create, so a kind whose
// generation counts spec changes sets it to 1 in PrepareForCreate and
// increments it in PrepareForUpdate when the spec changed.
type Strategy struct {
	// ValidateName checks metadata.name (and generateName, as a prefix).
	// Nil: DNS subdomain.
	ValidateName validation.ValidateNameFunc
	// PrepareForCreate defaults a new object and clears what a client may
	// not set on create (e.g. a pod's status).
	PrepareForCreate func(obj runtime.Object)
	// PrepareForUpdate makes a main-resource update keep the stored status,
	// and bumps metadata.generation when the spec changed.
	PrepareForUpdate func(obj, old runtime.Object)
	// PrepareForStatusUpdate makes a status update keep the stored spec.
	// Nil: the resource has no status subresource (404).
	PrepareForStatusUpdate func(obj, old runtime.Object)
	// Validate checks a whole object, on create and on update: 422 Invalid
	// with the returned field causes.
	Validate func(obj runtime.Object) field.ErrorList
	// ValidateCreate checks a new object, on create only, besides
	// Validate (kinds whose upstream validation of an update is not that
	// of a create plus ValidateUpdate: CustomResourceDefinitions).
	ValidateCreate func(obj runtime.Object) field.ErrorList
	// ValidateUpdate checks what may not change between old and obj.
	ValidateUpdate func(obj, old runtime.Object) field.ErrorList
	// ValidateStatusUpdate, when set, checks a status update instead of
	// Validate and ValidateUpdate (custom resources check the status
	// schema only, as the rest was carried over).
	ValidateStatusUpdate func(obj, old runtime.Object) field.ErrorList
	// Canonicalize runs after validation, when the final name is known.
	Canonicalize func(obj runtime.Object)
	// PrepareForFinalize makes a finalize update (namespaces/<name>/finalize)
	// keep everything but spec.finalizers and metadata. Nil: no finalize
	// subresource.
	PrepareForFinalize func(obj, old runtime.Object)
	// GracefulDelete, when set, is a first step a DELETE takes before the
	// generic rules of deletion.go, with a copy of the stored object, which
	// it may change (namespaces: Terminating).
	GracefulDelete func(obj runtime.Object, now time.Time) DeleteAction
	// DeleteDuringUpdate, when set, must also agree before an update that
	// leaves an object being deleted without metadata.finalizers deletes
	// it (namespaces wait for spec.finalizers too).
	DeleteDuringUpdate func(obj, old runtime.Object) bool
	// GracePeriod makes the kind's deletion graceful (upstream's
	// CheckGracefulDelete): it returns the seconds obj is given before it
	// goes, from the request's gracePeriodSeconds (nil if absent) and obj.
	// Nil: deleted at once (or when its finalizers are gone).
	GracePeriod func(obj runtime.Object, requested *int64) int64
	// DefaultGCPolicy is what a DELETE naming no propagation policy does
	// with the object's dependents.
	DefaultGCPolicy GCPolicy
	// BeginWrite, when set, runs after validation and before the etcd
	// transaction of a write of obj (old is nil on create), and may change
	// obj: it takes what the write needs from outside the object (a
	// Service's ClusterIP and NodePorts, kept in etcd by package kinds).
	// The returned done is called once the write is decided: written
	// false undoes what BeginWrite took, true completes the write (an
	// update gives back what it no longer holds). A dry run skips it.
	BeginWrite func(ctx context.Context, env HookEnv, obj, old runtime.Object) (done func(ctx context.Context, written bool), err error)
	// AfterDelete, when set, runs once obj is deleted from etcd: it gives
	// back what the object held outside itself.
	AfterDelete func(ctx context.Context, env HookEnv, obj runtime.Object)
}

// DeleteAction is what a DELETE does to a resource whose strategy makes
// deletion take more than one step.
type DeleteAction int

const (
	DeleteNow  DeleteAction = iota // go on with the generic rules (finalizers, grace)
	DeleteMark                     // store the object as the strategy changed it (e.g. Terminating)
	DeleteWait                     // change nothing: finalizers are still pending
)

// HookEnv is what a Strategy's write hooks get from the Store.
type HookEnv struct {
	// KV reaches the Store's main etcd cluster through the same wrapper as
	// every other request of the Store (faults, metrics, traces).
	KV clientv3.KV
	// StorageMediaType is how the Store encodes objects in etcd, for a
	// hook that keeps objects of its own there.
	StorageMediaType string
}

// DefaultStrategy is the rules of a resource without a Strategy: metadata
// only.
var DefaultStrategy = &Strategy{ValidateName: validation.NameIsDNSSubdomain}

// checkUpdate runs the strategy's checks of an update: Validate and
// ValidateUpdate, or ValidateStatusUpdate alone for a status update when
// the strategy has one.
func (st *Strategy) checkUpdate(obj, old runtime.Object, subresource string) field.ErrorList {
	if subresource == "status" && st.ValidateStatusUpdate != nil {
		return st.ValidateStatusUpdate(obj, old)
	}
	var errs field.ErrorList
	if st.Validate != nil {
		errs = append(errs, st.Validate(obj)...)
	}
	if st.ValidateUpdate != nil {
		errs = append(errs, st.ValidateUpdate(obj, old)...)
	}
	return errs
}

// validateName is ValidateName, or DNS subdomain when it is nil.
func (st *Strategy) validateName() validation.ValidateNameFunc {
	if st.ValidateName != nil {
		return st.ValidateName
	}
	return validation.NameIsDNSSubdomain
}
