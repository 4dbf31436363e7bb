package crd

// Validating a custom resource, as upstream's strategy for custom
// resources does, with apiextensions' own checks in this order:
//
//  1. apiVersion and kind must be the version's (nothing else is checked
//     when they are not);
//  2. the OpenAPI v3 schema (types, formats, enums, bounds, required...);
//     on update, ratcheting lets a field that did not change keep a value
//     that the schema has since come to refuse;
//  3. the scale subresource's replicas paths hold integers in int32 range;
//  4. the metadata of x-kubernetes-embedded-resource objects;
//  5. x-kubernetes-list-type map and set invariants;
//  6. x-kubernetes-validations CEL rules, within CELCostBudget, with
//     oldSelf bound on update (transition rules). They are skipped, with
//     one error saying so, when step 2 already found an error that makes
//     the object's shape unreliable (wrong type, missing, too long...).
//
// Errors carry upstream's field paths and messages. The metadata of the
// object itself (name, labels, ...) is checked by the registry's generic
// rules, as for every kind.

import (
	"context"
	"fmt"
	"math"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/cel/common"
)

// Validate checks a new object (create).
func (v *Version) Validate(ctx context.Context, u *unstructured.Unstructured) field.ErrorList {
	if errs := v.validateTypeMeta(u); len(errs) > 0 {
		return errs
	}
	errs := apiservervalidation.ValidateCustomResource(nil, u.Object, v.validator)
	errs = append(errs, v.validateScale(u, true)...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, u.Object, v.structural, false)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, v.structural, u.Object)...)
	return append(errs, v.validateCEL(ctx, errs, u, nil)...)
}

// ValidateUpdate checks a main-resource update of old into u.
func (v *Version) ValidateUpdate(ctx context.Context, u, old *unstructured.Unstructured) field.ErrorList {
	if errs := v.validateTypeMeta(u); len(errs) > 0 {
		return errs
	}
	correlated := common.NewCorrelatedObject(u.Object, old.Object, &model.Structural{Structural: v.structural})
	errs := apiservervalidation.ValidateCustomResourceUpdate(nil, u.Object, old.Object, v.validator,
		apiservervalidation.WithRatcheting(correlated))
	errs = append(errs, v.validateScale(u, true)...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, u.Object, v.structural, false)...)
	// A list that already broke its list-type invariant may keep doing so.
	if oldErrs := structurallisttype.ValidateListSetsAndMaps(nil, v.structural, old.Object); len(oldErrs) == 0 {
		errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, v.structural, u.Object)...)
	}
	return append(errs, v.validateCEL(ctx, errs, u, old, cel.WithRatcheting(correlated))...)
}

// ValidateStatusUpdate checks a status update of old into u: the status
// schema only, as everything else was carried over from old.
func (v *Version) ValidateStatusUpdate(ctx context.Context, u, old *unstructured.Unstructured) field.ErrorList {
	if errs := v.validateTypeMeta(u); len(errs) > 0 {
		return errs
	}
	correlated := common.NewCorrelatedObject(u.Object, old.Object, &model.Structural{Structural: v.structural})
	var errs field.ErrorList
	if status, ok := u.Object["status"]; ok && v.statusValidator != nil {
		errs = apiservervalidation.ValidateCustomResourceUpdate(field.NewPath("status"), status, old.Object["status"],
			v.statusValidator, apiservervalidation.WithRatcheting(correlated.Key("status")))
	}
	errs = append(errs, v.validateScale(u, false)...)
	if newErrs := structurallisttype.ValidateListSetsAndMaps(nil, v.structural, u.Object); len(newErrs) > 0 {
		if oldErrs := structurallisttype.ValidateListSetsAndMaps(nil, v.structural, old.Object); len(oldErrs) == 0 {
			errs = append(errs, newErrs...)
		}
	}
	return append(errs, v.validateCEL(ctx, errs, u, old, cel.WithRatcheting(correlated))...)
}

// validateTypeMeta: apiVersion and kind must name this version's kind.
func (v *Version) validateTypeMeta(u *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	if u.GetKind() != v.gvk.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), u.GetKind(), fmt.Sprintf("must be %v", v.gvk.Kind)))
	}
	if want := v.gvk.GroupVersion().String(); u.GetAPIVersion() != want {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), u.GetAPIVersion(), fmt.Sprintf("must be %v", want)))
	}
	return errs
}

// validateCEL runs the x-kubernetes-validations rules (old nil on
// create), unless errs holds an error that makes their input unreliable.
func (v *Version) validateCEL(ctx context.Context, errs field.ErrorList, u, old *unstructured.Unstructured, opts ...cel.Option) field.ErrorList {
	if v.celValidator == nil {
		return nil
	}
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return field.ErrorList{field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")}
		}
	}
	var oldObj any
	if old != nil {
		oldObj = old.Object
	}
	celErrs, _ := v.celValidator.Validate(ctx, nil, v.structural, u.Object, oldObj, CELCostBudget, opts...)
	return celErrs
}

// validateScale checks the integers the scale subresource maps: the spec
// replicas (unless only the status changes) and the status replicas, and
// that the label selector path, if any, holds a string.
func (v *Version) validateScale(u *unstructured.Unstructured, withSpec bool) field.ErrorList {
	if v.scale == nil {
		return nil
	}
	var errs field.ErrorList
	if withSpec {
		errs = append(errs, validateReplicas(u, v.scale.SpecReplicasPath)...)
	}
	errs = append(errs, validateReplicas(u, v.scale.StatusReplicasPath)...)
	if p := v.scale.LabelSelectorPath; p != nil {
		selector, _, err := unstructured.NestedString(u.Object, splitPath(*p)...)
		if err != nil {
			errs = append(errs, field.Invalid(field.NewPath(*p), selector, err.Error()))
		}
	}
	return errs
}

// validateReplicas checks the integer at the JSON path (".spec.replicas").
func validateReplicas(u *unstructured.Unstructured, path string) field.ErrorList {
	n, _, err := unstructured.NestedInt64(u.Object, splitPath(path)...)
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(field.NewPath(path), n, err.Error())}
	case n < 0:
		return field.ErrorList{field.Invalid(field.NewPath(path), n, "should be a non-negative integer")}
	case n > math.MaxInt32:
		return field.ErrorList{field.Invalid(field.NewPath(path), n, fmt.Sprintf("should be less than or equal to %v", math.MaxInt32))}
	}
	return nil
}

// splitPath turns a simple JSON path (".spec.replicas") into its fields.
func splitPath(path string) []string {
	return strings.Split(strings.TrimPrefix(path, "."), ".")
}
