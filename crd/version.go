package crd

// One version of one CustomResourceDefinition, compiled once into what a
// request needs: the structural schema (pruning, defaulting), the OpenAPI
// validators (the whole object, and the status alone), the CEL rules of
// x-kubernetes-validations and the declared subresources. Building it is
// the expensive step (the CEL rules are compiled here); every method
// afterwards only reads it, so one Version serves concurrent requests.

import (
	"fmt"
	"sync"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// Version holds the rules of one served version of a CRD. Build it with
// NewVersion; it is immutable afterwards and safe for concurrent use.
type Version struct {
	gvk        schema.GroupVersionKind
	namespaced bool

	// structural is the version's schema with its defaults pruned, as
	// pruning and defaulting walk it. Never nil: a CRD without a schema
	// (only possible with preserveUnknownFields) gets an empty one.
	structural *structuralschema.Structural
	// preserveUnknownFields is the CRD's spec.preserveUnknownFields: no
	// pruning at all (only v1beta1 CRDs could set it; v1 keeps it false).
	preserveUnknownFields bool

	// validator checks a whole object against the OpenAPI schema;
	// statusValidator checks .status alone (nil: no status schema).
	validator       apiservervalidation.SchemaValidator
	statusValidator apiservervalidation.SchemaValidator
	// celValidator runs x-kubernetes-validations; nil when no rule exists.
	celValidator *cel.Validator

	// status and scale are the declared subresources (nil: not served).
	status *apiextensions.CustomResourceSubresourceStatus
	scale  *apiextensions.CustomResourceSubresourceScale

	// crd is a private copy, read by the type converter (built on first
	// use, under typeConverterOnce, because most stacks never apply).
	crd               *apiextensionsv1.CustomResourceDefinition
	typeConverterOnce sync.Once
	typeConverter     managedfields.TypeConverter
	typeConverterErr  error
}

// CELCostBudget is the total cost the x-kubernetes-validations rules of
// one object may spend, and CELPerCallLimit the cost of one rule's
// evaluation: upstream's budgets, about one second and a tenth of one.
const (
	CELCostBudget   = celconfig.RuntimeCELCostBudget
	CELPerCallLimit = celconfig.PerCallLimit
)

// NewVersion compiles version of crd. The CRD is expected to have passed
// apiextensions' validation (structural schemas, compilable CEL rules);
// an error here means it did not, or names a version it does not have.
func NewVersion(crd *apiextensionsv1.CustomResourceDefinition, version string) (*Version, error) {
	return newVersion(crd, version, CELPerCallLimit)
}

// newVersion is NewVersion with celPerCallLimit as the cost limit of one
// rule's evaluation (tests lower it to reach it quickly).
func newVersion(crd *apiextensionsv1.CustomResourceDefinition, version string, celPerCallLimit uint64) (*Version, error) {
	crd = crd.DeepCopy()
	found := false
	for _, v := range crd.Spec.Versions {
		found = found || v.Name == version
	}
	if !found {
		return nil, fmt.Errorf("%s has no version %q", crd.Name, version)
	}
	v := &Version{
		gvk:                   schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: crd.Spec.Names.Kind},
		namespaced:            crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
		preserveUnknownFields: crd.Spec.PreserveUnknownFields,
		crd:                   crd,
	}
	props, err := internalSchema(crd, version)
	if err != nil {
		return nil, err
	}
	if err := v.compileSchema(props, celPerCallLimit); err != nil {
		return nil, fmt.Errorf("%s version %s: %w", crd.Name, version, err)
	}
	if err := v.setSubresources(crd, version); err != nil {
		return nil, err
	}
	return v, nil
}

// internalSchema returns the version's openAPIV3Schema in apiextensions'
// internal form, which its schema packages take (nil: no schema).
func internalSchema(crd *apiextensionsv1.CustomResourceDefinition, version string) (*apiextensions.JSONSchemaProps, error) {
	val, err := apiextensionshelpers.GetSchemaForVersion(crd, version)
	if err != nil || val == nil {
		return nil, err
	}
	internal := &apiextensions.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(val, internal, nil); err != nil {
		return nil, fmt.Errorf("converting the schema of %s version %s: %w", crd.Name, version, err)
	}
	return internal.OpenAPIV3Schema, nil
}

// compileSchema builds the structural schema, the OpenAPI validators and
// the CEL rules from props.
func (v *Version) compileSchema(props *apiextensions.JSONSchemaProps, celPerCallLimit uint64) error {
	v.structural = &structuralschema.Structural{}
	if props != nil {
		s, err := structuralschema.NewStructural(props)
		if err != nil && !v.preserveUnknownFields {
			return fmt.Errorf("the schema is not structural: %w", err)
		}
		if err == nil {
			// Defaults that pruning would change are dropped, as upstream
			// does before it serves (the copy keeps the CRD's intact).
			s = s.DeepCopy()
			if err := structuraldefaulting.PruneDefaults(s); err != nil {
				return fmt.Errorf("pruning the schema's defaults: %w", err)
			}
			v.structural = s
		}
	}
	var err error
	if v.validator, _, err = apiservervalidation.NewSchemaValidator(props); err != nil {
		return fmt.Errorf("building the schema validator: %w", err)
	}
	if props != nil {
		if status, ok := props.Properties["status"]; ok {
			if v.statusValidator, _, err = apiservervalidation.NewSchemaValidator(&status); err != nil {
				return fmt.Errorf("building the status validator: %w", err)
			}
		}
	}
	// NewValidator compiles every rule once; nil when there is none.
	v.celValidator = cel.NewValidator(v.structural, true, celPerCallLimit)
	return nil
}

// setSubresources records the version's status and scale subresources.
func (v *Version) setSubresources(crd *apiextensionsv1.CustomResourceDefinition, version string) error {
	sub, err := apiextensionshelpers.GetSubresourcesForVersion(crd, version)
	if err != nil || sub == nil {
		return err
	}
	if sub.Status != nil {
		v.status = &apiextensions.CustomResourceSubresourceStatus{}
	}
	if sub.Scale != nil {
		v.scale = &apiextensions.CustomResourceSubresourceScale{}
		if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceScale_To_apiextensions_CustomResourceSubresourceScale(sub.Scale, v.scale, nil); err != nil {
			return fmt.Errorf("converting the scale subresource of %s version %s: %w", crd.Name, version, err)
		}
	}
	return nil
}

// GroupVersionKind is the kind the version serves.
func (v *Version) GroupVersionKind() schema.GroupVersionKind { return v.gvk }

// Namespaced reports the CRD's scope.
func (v *Version) Namespaced() bool { return v.namespaced }

// HasStatus reports whether the version declares the status subresource.
func (v *Version) HasStatus() bool { return v.status != nil }
