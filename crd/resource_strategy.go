package crd

// The rules every custom resource follows, whatever its schema, as
// upstream's customresource strategy: names are DNS subdomains (checked
// with the rest of metadata by the Store), metadata.generation is 1 on
// create and grows with every change outside metadata (and outside status,
// when the status subresource is on), and with a status subresource the
// main resource never writes status and the status subresource writes
// nothing else.
//
// Schema-driven rules (validation, pruning, defaulting, CEL) are added to
// strategy by the schema code of this package; strategy is where they go.

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minicp/registry"
)

// strategy is one served version's write rules.
type strategy struct {
	// hasStatus: the version declares the status subresource.
	hasStatus bool
	// validate, when set, checks a whole object beyond its metadata, on
	// create and update (the schema's rules).
	validate func(obj *unstructured.Unstructured) field.ErrorList
	// validateUpdate, when set, checks a change (transition rules).
	validateUpdate func(obj, old *unstructured.Unstructured) field.ErrorList
	// prepare, when set, runs on every object a write is about to store,
	// after the generic rules (the schema's pruning and defaulting).
	prepare func(obj *unstructured.Unstructured)
}

func newStrategy(hasStatus bool) *strategy {
	return &strategy{hasStatus: hasStatus}
}

// registryStrategy turns s into the Store's Strategy.
func (s *strategy) registryStrategy() *registry.Strategy {
	st := &registry.Strategy{
		ValidateName:     validation.NameIsDNSSubdomain,
		PrepareForCreate: func(obj runtime.Object) { s.prepareForCreate(asUnstructured(obj)) },
		PrepareForUpdate: func(obj, old runtime.Object) { s.prepareForUpdate(asUnstructured(obj), asUnstructured(old)) },
		Validate: func(obj runtime.Object) field.ErrorList {
			if s.validate == nil {
				return nil
			}
			return s.validate(asUnstructured(obj))
		},
		ValidateUpdate: func(obj, old runtime.Object) field.ErrorList {
			if s.validateUpdate == nil {
				return nil
			}
			return s.validateUpdate(asUnstructured(obj), asUnstructured(old))
		},
	}
	if s.hasStatus {
		st.PrepareForStatusUpdate = func(obj, old runtime.Object) {
			s.prepareForStatusUpdate(asUnstructured(obj), asUnstructured(old))
		}
	}
	return st
}

func asUnstructured(obj runtime.Object) *unstructured.Unstructured {
	u, _ := obj.(*unstructured.Unstructured)
	if u == nil {
		return &unstructured.Unstructured{Object: map[string]any{}}
	}
	return u
}

// prepareForCreate: generation 1, and no status when only the status
// subresource may write it.
func (s *strategy) prepareForCreate(obj *unstructured.Unstructured) {
	if s.hasStatus {
		delete(obj.Object, "status")
	}
	obj.SetGeneration(1)
	if s.prepare != nil {
		s.prepare(obj)
	}
}

// prepareForUpdate keeps the stored status when the status subresource is
// on, and bumps the generation when anything but metadata changed.
func (s *strategy) prepareForUpdate(obj, old *unstructured.Unstructured) {
	if s.hasStatus {
		if status, ok := old.Object["status"]; ok {
			obj.Object["status"] = status
		} else {
			delete(obj.Object, "status")
		}
	}
	if s.prepare != nil {
		s.prepare(obj)
	}
	if !equality.Semantic.DeepEqual(withoutMetadata(obj), withoutMetadata(old)) {
		obj.SetGeneration(old.GetGeneration() + 1)
	}
}

// prepareForStatusUpdate keeps everything of the stored object but its
// status, which comes from the request (metadata is the Store's business:
// it resets what a status update may not change).
func (s *strategy) prepareForStatusUpdate(obj, old *unstructured.Unstructured) {
	status, hasStatus := obj.Object["status"]
	metadata := obj.Object["metadata"]
	obj.Object = old.DeepCopy().Object
	obj.Object["metadata"] = metadata
	if hasStatus {
		obj.Object["status"] = status
	} else {
		delete(obj.Object, "status")
	}
	if s.prepare != nil {
		s.prepare(obj)
	}
}

// withoutMetadata is obj's content without its metadata, apiVersion and
// kind (which a request at another served version changes), for comparing.
func withoutMetadata(obj *unstructured.Unstructured) map[string]any {
	out := make(map[string]any, len(obj.Object))
	for k, v := range obj.Object {
		switch k {
		case "metadata", "apiVersion", "kind":
			continue
		}
		out[k] = v
	}
	return out
}
