package crd

// The rules every custom resource follows, whatever its schema, as
// upstream's customresource strategy: names are DNS subdomains (checked
// with the rest of metadata by the Store), metadata.generation is 1 on
// create and grows with every change outside metadata (and outside status,
// when the status subresource is on), and with a status subresource the
// main resource never writes status and the status subresource writes
// nothing else.
//
// The schema's rules (validation, pruning, defaulting, CEL) come from the
// version's Version (version.go, schema*.go), when the descriptor has one.

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"minicp/registry/rest"
)

// strategy is one served version's write rules.
type strategy struct {
	// hasStatus: the version declares the status subresource.
	hasStatus bool
	// schema, when set, is the version's schema rules (version.go): every
	// write is pruned and defaulted by it, and checked by it on create, on
	// update and on status updates (schema_validate.go).
	schema *Version
}

func newStrategy(hasStatus bool) *strategy {
	return &strategy{hasStatus: hasStatus}
}

// registryStrategy turns s into the Store's Strategy.
func (s *strategy) registryStrategy() *rest.Strategy {
	st := &rest.Strategy{
		ValidateName:     validation.NameIsDNSSubdomain,
		PrepareForCreate: func(obj runtime.Object) { s.prepareForCreate(asUnstructured(obj)) },
		PrepareForUpdate: func(obj, old runtime.Object) { s.prepareForUpdate(asUnstructured(obj), asUnstructured(old)) },
	}
	if s.schema != nil {
		s.schema.addValidation(st)
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
	if s.schema != nil {
		s.schema.pruneAndDefault(obj)
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
	if s.schema != nil {
		s.schema.pruneAndDefault(obj)
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
	if s.schema != nil {
		s.schema.pruneAndDefault(obj)
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
