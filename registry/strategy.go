package registry

// Strategies are what differs between resources, as in upstream's
// pkg/registry/<group>/<resource>/strategy.go: defaulting, validation, and
// which parts of an object a write may change. The generic steps around
// them (system fields, name generation, immutable metadata) are here.

import (
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// strategy holds one resource's rules. Nil functions are no-ops.
type strategy struct {
	// validateName checks metadata.name (and generateName, as a prefix).
	validateName validation.ValidateNameFunc
	// prepareForCreate defaults a new object and clears what a client may
	// not set on create (e.g. a pod's status).
	prepareForCreate func(obj runtime.Object)
	// prepareForUpdate makes a main-resource update keep the stored status,
	// and bumps metadata.generation when the spec changed.
	prepareForUpdate func(obj, old runtime.Object)
	// prepareForStatusUpdate makes a status update keep the stored spec.
	prepareForStatusUpdate func(obj, old runtime.Object)
	// validate checks a whole object, on create and on update.
	validate func(obj runtime.Object) field.ErrorList
	// validateUpdate checks what may not change between old and obj.
	validateUpdate func(obj, old runtime.Object) field.ErrorList
	// canonicalize runs after validation, when the final name is known.
	canonicalize func(obj runtime.Object)
	// prepareForFinalize makes a finalize update (namespaces/<name>/finalize)
	// keep everything but spec.finalizers and metadata. Nil: no finalize
	// subresource.
	prepareForFinalize func(obj, old runtime.Object)
	// gracefulDelete, when set, decides what a DELETE does with a copy of
	// the stored object, which it may change (namespace.go). Nil: the key
	// is removed at once.
	gracefulDelete func(obj runtime.Object, now time.Time) deleteAction
	// deleteDuringUpdate reports whether an update of old into obj removes
	// the object instead of writing it: the last finalizer of an object
	// being deleted is gone.
	deleteDuringUpdate func(obj, old runtime.Object) bool
}

// strategies maps a resource's group and plural name to its rules. A
// resource missing here gets metadata-only rules.
var strategies = map[string]*strategy{
	"/pods":                      podStrategy,
	"/namespaces":                namespaceStrategy,
	"/nodes":                     nodeStrategy,
	"/configmaps":                configMapStrategy,
	"/events":                    eventStrategy,
	"coordination.k8s.io/leases": leaseStrategy,
}

var defaultStrategy = &strategy{validateName: validation.NameIsDNSSubdomain}

func strategyFor(res *Resource) *strategy {
	if st, ok := strategies[res.GroupVersion.Group+"/"+res.Name]; ok {
		return st
	}
	return defaultStrategy
}

// maxGeneratedNameLength leaves room for the 5-character random suffix in a
// 63-character name, as upstream's name generator does.
const maxGeneratedNameLength = 63 - 5

// generateName fills metadata.name from metadata.generateName.
func generateName(m metav1.Object) {
	if m.GetName() != "" || m.GetGenerateName() == "" {
		return
	}
	base := m.GetGenerateName()
	if len(base) > maxGeneratedNameLength {
		base = base[:maxGeneratedNameLength]
	}
	m.SetName(base + utilrand.String(5))
}

// setNamespace makes obj's namespace the request's: it fills an empty one,
// refuses a different one (400, as upstream), and clears it for
// cluster-scoped resources.
func setNamespace(res *Resource, m metav1.Object, namespace string) error {
	if !res.Namespaced {
		m.SetNamespace(metav1.NamespaceNone)
		return nil
	}
	switch m.GetNamespace() {
	case "":
		m.SetNamespace(namespace)
	case namespace:
	default:
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// beforeCreate runs the generic and per-resource steps of a create: system
// fields, defaulting, name generation, validation. It returns 422 Invalid
// with field causes when the object is not acceptable.
func (s *Store) beforeCreate(res *Resource, namespace string, obj runtime.Object) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if err := setNamespace(res, m, namespace); err != nil {
		return err
	}
	st := strategyFor(res)
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	if st.prepareForCreate != nil {
		st.prepareForCreate(obj)
	}
	m.SetCreationTimestamp(metav1.NewTime(s.opts.Now()))
	m.SetUID(uuid.NewUUID())
	generateName(m)

	errs := validation.ValidateObjectMetaAccessor(m, res.Namespaced, st.validateName, field.NewPath("metadata"))
	if st.validate != nil {
		errs = append(errs, st.validate(obj)...)
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(res.GroupVersionKind().GroupKind(), m.GetName(), errs)
	}
	if st.canonicalize != nil {
		st.canonicalize(obj)
	}
	return nil
}

// beforeUpdate runs the generic and per-resource steps of an update of old
// into obj. subresource "status" keeps the stored spec and metadata; "" keeps
// the stored status. Immutable metadata is carried over or refused.
func (s *Store) beforeUpdate(res *Resource, obj, old runtime.Object, subresource string) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	oldMeta, err := meta.Accessor(old)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if err := setNamespace(res, m, oldMeta.GetNamespace()); err != nil {
		return err
	}
	st := strategyFor(res)
	// A request cannot set the generation; the strategy bumps it.
	m.SetGeneration(oldMeta.GetGeneration())
	switch subresource {
	case "":
		if st.prepareForUpdate != nil {
			st.prepareForUpdate(obj, old)
		}
	case "status":
		if st.prepareForStatusUpdate == nil {
			return apierrors.NewNotFound(qualifiedResource(res), oldMeta.GetName())
		}
		st.prepareForStatusUpdate(obj, old)
		metav1.ResetObjectMetaForStatus(m, oldMeta)
	case "finalize":
		if st.prepareForFinalize == nil {
			return apierrors.NewNotFound(qualifiedResource(res), oldMeta.GetName())
		}
		st.prepareForFinalize(obj, old)
	default:
		return apierrors.NewBadRequest(fmt.Sprintf("subresource %q is not supported for %s", subresource, res.Name))
	}
	if m.GetUID() == "" {
		m.SetUID(oldMeta.GetUID())
	}
	m.SetCreationTimestamp(oldMeta.GetCreationTimestamp())
	if oldMeta.GetDeletionTimestamp() != nil {
		m.SetDeletionTimestamp(oldMeta.GetDeletionTimestamp())
		m.SetDeletionGracePeriodSeconds(oldMeta.GetDeletionGracePeriodSeconds())
	}

	path := field.NewPath("metadata")
	errs := validation.ValidateObjectMetaAccessorUpdate(m, oldMeta, path)
	errs = append(errs, validation.ValidateObjectMetaAccessor(m, res.Namespaced, st.validateName, path)...)
	if st.validate != nil {
		errs = append(errs, st.validate(obj)...)
	}
	if st.validateUpdate != nil {
		errs = append(errs, st.validateUpdate(obj, old)...)
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(res.GroupVersionKind().GroupKind(), m.GetName(), errs)
	}
	if st.canonicalize != nil {
		st.canonicalize(obj)
	}
	return nil
}
