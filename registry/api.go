package registry

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Interface is what the apiserver needs from storage. The etcd-backed Store
// implements it, and so does the watch cache (package watchcache), which
// serves GET, LIST and WATCH from memory and passes writes to the Store.
//
// Every error returned is a *apierrors.StatusError (k8s.io/apimachinery/pkg/api/errors)
// carrying the upstream code and reason, so the HTTP layer only has to encode it.
type Interface interface {
	// Get returns one object. ResourceVersion "" is a quorum read; "0" may be
	// served from anything; "N" means "not older than N".
	Get(ctx context.Context, res *Resource, namespace, name string, opts GetOptions) (runtime.Object, error)
	// List returns a *List object of the resource's list kind (e.g. *corev1.PodList)
	// whose ListMeta.ResourceVersion is the revision the list was read at.
	// namespace "" lists across all namespaces.
	List(ctx context.Context, res *Resource, namespace string, opts ListOptions) (runtime.Object, error)
	// Watch streams events after opts.ResourceVersion (see ListOptions). The
	// watch ends when ctx is done or Stop is called; its result channel is then closed.
	// An event's object may be a runtime.CacheableObject (the watch cache
	// shares one per event among all watchers, so that it is encoded once per
	// media type): encode it as it is, or call GetObject for a private copy.
	Watch(ctx context.Context, res *Resource, namespace string, opts ListOptions) (watch.Interface, error)
	// Create stores a new object and returns it as stored, with its
	// resourceVersion set to the revision of the creating transaction.
	Create(ctx context.Context, res *Resource, namespace string, obj runtime.Object, opts WriteOptions) (runtime.Object, error)
	// Update reads the current object, calls tryUpdate with a copy of it, and
	// writes the result with a compare-and-swap on the key's mod revision.
	// See UpdateFunc for the conflict rules. The bool reports whether the
	// object was created (only for resources with AllowCreateOnUpdate, or
	// when opts.AllowCreate).
	Update(ctx context.Context, res *Resource, namespace, name string, opts UpdateOptions, tryUpdate UpdateFunc) (runtime.Object, bool, error)
	// Delete removes the object, honouring opts.Preconditions, and returns
	// the last state stamped with the deletion's revision.
	Delete(ctx context.Context, res *Resource, namespace, name string, opts DeleteOptions) (runtime.Object, error)
}

// UpdateFunc turns the current object (a deep copy the function may modify;
// nil when the object does not exist) into the desired object.
//
// If the returned object carries a resourceVersion, the write succeeds only if
// it equals the current mod revision; otherwise the update fails with 409
// Conflict ("the object has been modified; please apply your changes to the
// latest version and try again"). If it carries none, Update retries with a
// fresh current object until its compare-and-swap applies.
type UpdateFunc func(current runtime.Object) (runtime.Object, error)

// GetOptions select which state of an object a Get returns.
type GetOptions struct {
	ResourceVersion string
}

// ListOptions select objects and the revision to read or watch from. The
// HTTP layer parses query parameters into it; both List and Watch use it.
type ListOptions struct {
	LabelSelector        labels.Selector // nil means everything
	FieldSelector        fields.Selector // nil means everything
	ResourceVersion      string
	ResourceVersionMatch metav1.ResourceVersionMatch
	Limit                int64
	Continue             string

	// Watch only.
	AllowWatchBookmarks bool
	SendInitialEvents   *bool
}

// WriteOptions apply to Create.
type WriteOptions struct {
	DryRun bool
}

// UpdateOptions apply to Update.
type UpdateOptions struct {
	DryRun bool
	// Subresource is "" for the main resource or "status". A status update
	// keeps the stored spec and the stored labels, annotations, finalizers
	// and owner references (metav1.ResetObjectMetaForStatus); a main update
	// keeps the stored status, as upstream strategies do.
	Subresource string
	// AllowCreate lets this update create a missing object even when the
	// resource has no AllowCreateOnUpdate: server-side apply creates what
	// it applies, as upstream's does.
	AllowCreate bool
}

// DeleteOptions apply to Delete.
type DeleteOptions struct {
	DryRun        bool
	Preconditions *metav1.Preconditions
	// GracePeriodSeconds is the request's grace period for kinds deleted
	// gracefully (pods); nil: the object's own (rest/deletion.go).
	GracePeriodSeconds *int64
	// PropagationPolicy and the older OrphanDependents say what happens
	// to the object's dependents; nil: the kind's default (GCPolicy).
	PropagationPolicy *metav1.DeletionPropagation
	OrphanDependents  *bool
}
