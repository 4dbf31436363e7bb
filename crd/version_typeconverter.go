package crd

// The type converter server-side apply needs for a custom resource: it
// turns an object into structured-merge-diff's typed value, so that the
// field manager can tell which fields a manager owns, merge an applied
// configuration (lists by their x-kubernetes-list-type and map keys, maps
// by x-kubernetes-map-type) and find conflicts.
//
// It is built as upstream builds it for CRDs: the OpenAPI v3 models of
// every version of the CRD (apiextensions' OpenAPI builder, defaults and
// value validations kept), merged, and handed to managedfields'
// NewTypeConverter. The models of ObjectMeta and the other metadata types
// come with them, from apiextensions' generated definitions.

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/spec3"

	"minicp/registry/typeconverter"
)

// TypeConverter returns the type converter of the version's CRD, for
// managedfields' field manager (server-side apply and managedFields of
// custom resources). It knows every version of the CRD, not only v's,
// as managedFields may record fields in any version the CRD serves. It
// is built on first use and shared by every later call.
func (v *Version) TypeConverter() (managedfields.TypeConverter, error) {
	v.typeConverterOnce.Do(func() {
		v.typeConverter, v.typeConverterErr = NewTypeConverter(v.crd)
	})
	return v.typeConverter, v.typeConverterErr
}

// LazyTypeConverter is TypeConverter for a descriptor: it builds the
// converter on its first use (most stacks never apply to a custom
// resource, and building takes milliseconds), then behaves as it.
func (v *Version) LazyTypeConverter() managedfields.TypeConverter {
	return typeconverter.Lazy(v.TypeConverter)
}

// NewTypeConverter builds the type converter of every version of crd
// from the versions' schemas. A CRD with spec.preserveUnknownFields gets
// one that keeps unknown fields, as upstream's does.
func NewTypeConverter(crd *apiextensionsv1.CustomResourceDefinition) (managedfields.TypeConverter, error) {
	specs := make([]*spec3.OpenAPI, 0, len(crd.Spec.Versions))
	for _, v := range crd.Spec.Versions {
		s, err := builder.BuildOpenAPIV3(crd, v.Name, builder.Options{})
		if err != nil {
			return nil, fmt.Errorf("building the OpenAPI models of %s version %s: %w", crd.Name, v.Name, err)
		}
		specs = append(specs, s)
	}
	merged, err := builder.MergeSpecsV3(specs...)
	if err != nil {
		return nil, fmt.Errorf("merging the OpenAPI models of %s: %w", crd.Name, err)
	}
	tc, err := managedfields.NewTypeConverter(merged.Components.Schemas, crd.Spec.PreserveUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("building the type converter of %s: %w", crd.Name, err)
	}
	return tc, nil
}
