package crd

// Shaping a decoded custom resource by its schema, as upstream's decoder
// for custom resources does before anything else sees the object:
//
//  1. metadata is read as an ObjectMeta and written back, which drops the
//     fields ObjectMeta does not have and refuses values of a wrong type;
//  2. pruning drops every field the structural schema does not declare,
//     except below x-kubernetes-preserve-unknown-fields, and keeps
//     apiVersion, kind and metadata of x-kubernetes-embedded-resource
//     objects (whose metadata is coerced in turn);
//  3. nulls are dropped where the schema neither allows them (nullable)
//     nor has a default to put there;
//  4. defaulting fills in the schema's defaults, including under an
//     object that was just added by a default.
//
// The dropped fields are what fieldValidation reports: Strict refuses the
// request (400, `strict decoding error: unknown field "spec.foo"`), Warn
// returns one warning per field, Ignore drops them silently.

import (
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
)

// Coerce shapes u (decoded from a request) by the schema: steps 1 to 3
// above. With unknownFields it returns the paths of the fields it dropped,
// sorted ("metadata.foo", "spec.bar"); otherwise nil. An error is a
// metadata value of the wrong type, which a request must not store.
func (v *Version) Coerce(u *unstructured.Unstructured, unknownFields bool) ([]string, error) {
	return v.coerce(u, unknownFields, false)
}

// Default fills in the schema's defaults (step 4).
func (v *Version) Default(u *unstructured.Unstructured) {
	structuraldefaulting.Default(u.Object, v.structural)
}

// FromStorage shapes an object read from etcd as upstream does: it is
// pruned and defaulted by the current schema, so that a field the schema
// stopped declaring disappears and a new default appears on objects
// written before it existed; metadata that does not decode is dropped
// rather than failing the read, and a missing generation becomes 1.
func (v *Version) FromStorage(u *unstructured.Unstructured) error {
	if _, err := v.coerce(u, false, true); err != nil {
		return err
	}
	if u.GetGeneration() == 0 {
		u.SetGeneration(1)
	}
	v.Default(u)
	return nil
}

// coerce is upstream's schema coercion of one object: metadata through
// ObjectMeta, pruning, nulls, embedded resources' metadata.
func (v *Version) coerce(u *unstructured.Unstructured, unknownFields, dropInvalidMetadata bool) ([]string, error) {
	obj := u.Object
	kind, foundKind, err := unstructured.NestedString(obj, "kind")
	if err != nil {
		return nil, err
	}
	apiVersion, foundAPIVersion, err := unstructured.NestedString(obj, "apiVersion")
	if err != nil {
		return nil, err
	}
	meta, foundMeta, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(obj, schemaobjectmeta.ObjectMetaOptions{
		DropMalformedFields:     dropInvalidMetadata,
		ReturnUnknownFieldPaths: unknownFields,
	})
	if err != nil {
		return nil, fmt.Errorf("decoding metadata: %w", err)
	}
	// Only the object itself is shaped by the kind's schema: a body of
	// another kind (DeleteOptions, say) is left alone.
	if gv, err := runtimeschema.ParseGroupVersion(apiVersion); err == nil && gv.Group == v.gvk.Group && kind == v.gvk.Kind {
		if !v.preserveUnknownFields {
			opts := schema.UnknownFieldPathOptions{TrackUnknownFieldPaths: unknownFields}
			unknown = append(unknown, structuralpruning.PruneWithOptions(obj, v.structural, true, opts)...)
			structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, v.structural)
		}
		fieldErr, paths := schemaobjectmeta.CoerceWithOptions(nil, obj, v.structural, false, schemaobjectmeta.CoerceOptions{
			DropInvalidFields:       dropInvalidMetadata,
			ReturnUnknownFieldPaths: unknownFields,
		})
		if fieldErr != nil {
			return nil, fieldErr
		}
		unknown = append(unknown, paths...)
	}
	// TypeMeta and ObjectMeta are written back clean.
	if foundKind {
		u.SetKind(kind)
	}
	if foundAPIVersion {
		u.SetAPIVersion(apiVersion)
	}
	if foundMeta {
		if err := schemaobjectmeta.SetObjectMeta(obj, meta); err != nil {
			return nil, err
		}
	}
	return unknown, nil
}
