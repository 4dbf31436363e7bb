package crd

// How a version's schema joins the write rules every custom resource
// follows (resource_strategy.go): every object a write is about to store
// is pruned and defaulted, whatever path decoded it (a create, an update,
// a patch, a status carried over); then it is checked as upstream checks
// custom resources: Validate on create, ValidateUpdate on update (which
// ratchets and runs transition rules), ValidateStatusUpdate on /status.

import (
	"context"
	"fmt"

	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minicp/registry/rest"
)

// addValidation sets st's schema checks. The registry's strategies take
// no request context: the CEL cost budget is what bounds the rules' work.
func (v *Version) addValidation(st *rest.Strategy) {
	st.ValidateCreate = func(obj runtime.Object) field.ErrorList {
		return v.Validate(context.Background(), asUnstructured(obj))
	}
	st.ValidateUpdate = func(obj, old runtime.Object) field.ErrorList {
		return v.ValidateUpdate(context.Background(), asUnstructured(obj), asUnstructured(old))
	}
	if v.status != nil {
		st.ValidateStatusUpdate = func(obj, old runtime.Object) field.ErrorList {
			return v.ValidateStatusUpdate(context.Background(), asUnstructured(obj), asUnstructured(old))
		}
	}
}

// coerceRequest is the descriptor's Coerce: an object decoded from a
// request is shaped by the schema (Coerce) and defaulted, as upstream's
// decoder of custom resources does, and the fields it dropped are
// returned for fieldValidation.
func (v *Version) coerceRequest(obj runtime.Object, unknownFields bool) ([]string, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("a custom resource decodes into *unstructured.Unstructured, not %T", obj)
	}
	unknown, err := v.Coerce(u, unknownFields)
	if err != nil {
		return nil, err
	}
	v.Default(u)
	return unknown, nil
}

// pruneAndDefault applies the schema's pruning and defaults to u. Its
// metadata is the Store's to check.
func (v *Version) pruneAndDefault(u *unstructured.Unstructured) {
	if !v.preserveUnknownFields {
		structuralpruning.Prune(u.Object, v.structural, true)
		structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, v.structural)
	}
	v.Default(u)
}
