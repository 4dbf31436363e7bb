package rest

// The generic steps of every write, around a kind's Strategy: the
// namespace, system fields, name generation, immutable metadata.

import (
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxGeneratedNameLength leaves room for the 5-character random suffix in a
// 63-character name, as upstream's name generator does.
const maxGeneratedNameLength = 63 - 5

// GenerateName fills metadata.name from metadata.generateName.
func GenerateName(m metav1.Object) {
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
func setNamespace(namespaced bool, m metav1.Object, namespace string) error {
	if !namespaced {
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

// Target is what the generic steps need to know of the resource written.
type Target struct {
	Namespaced    bool
	GroupResource schema.GroupResource
	GroupKind     schema.GroupKind
	Strategy      *Strategy
}

// BeforeCreate runs the generic and per-resource steps of a create: system
// fields, defaulting, name generation, validation. now is the creation
// time. It returns 422 Invalid with field causes when the object is not
// acceptable.
func BeforeCreate(res Target, namespace string, obj runtime.Object, now time.Time) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if err := setNamespace(res.Namespaced, m, namespace); err != nil {
		return err
	}
	st := res.Strategy
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	if st.PrepareForCreate != nil {
		st.PrepareForCreate(obj)
	}
	m.SetCreationTimestamp(metav1.NewTime(now))
	m.SetUID(uuid.NewUUID())
	GenerateName(m)

	errs := validation.ValidateObjectMetaAccessor(m, res.Namespaced, st.validateName(), field.NewPath("metadata"))
	if st.Validate != nil {
		errs = append(errs, st.Validate(obj)...)
	}
	if st.ValidateCreate != nil {
		errs = append(errs, st.ValidateCreate(obj)...)
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(res.GroupKind, m.GetName(), errs)
	}
	if st.Canonicalize != nil {
		st.Canonicalize(obj)
	}
	return nil
}

// BeforeUpdate runs the generic and per-resource steps of an update of old
// into obj. subresource "status" keeps the stored spec and metadata; "" keeps
// the stored status. Immutable metadata is carried over or refused.
func BeforeUpdate(res Target, obj, old runtime.Object, subresource string) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	oldMeta, err := meta.Accessor(old)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if err := setNamespace(res.Namespaced, m, oldMeta.GetNamespace()); err != nil {
		return err
	}
	st := res.Strategy
	// A request cannot set the generation; the strategy bumps it.
	m.SetGeneration(oldMeta.GetGeneration())
	switch subresource {
	case "":
		if st.PrepareForUpdate != nil {
			st.PrepareForUpdate(obj, old)
		}
	case "status":
		if st.PrepareForStatusUpdate == nil {
			return apierrors.NewNotFound(res.GroupResource, oldMeta.GetName())
		}
		st.PrepareForStatusUpdate(obj, old)
		metav1.ResetObjectMetaForStatus(m, oldMeta)
	case "finalize":
		if st.PrepareForFinalize == nil {
			return apierrors.NewNotFound(res.GroupResource, oldMeta.GetName())
		}
		st.PrepareForFinalize(obj, old)
	default:
		return apierrors.NewBadRequest(fmt.Sprintf("subresource %q is not supported for %s", subresource, res.GroupResource.Resource))
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
	errs = append(errs, validation.ValidateObjectMetaAccessor(m, res.Namespaced, st.validateName(), path)...)
	errs = append(errs, st.checkUpdate(obj, old, subresource)...)
	if len(errs) > 0 {
		return apierrors.NewInvalid(res.GroupKind, m.GetName(), errs)
	}
	if st.Canonicalize != nil {
		st.Canonicalize(obj)
	}
	return nil
}
