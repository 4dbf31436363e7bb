package crd

import (
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"minicp/registry"
)

// ResourceFor returns the descriptor of one served version of a custom
// resource: the registry.Resource the Store, the watch cache and the
// apiserver serve it by, as they serve a built-in kind.
//
// Its objects are *unstructured.Unstructured, stored as JSON at
// /registry/<group>/<plural>/[<namespace>/]<name> in the CRD's storage
// version (resource_codec.go), read back as version. Its Strategy is the
// rules every custom resource follows whatever its schema
// (resource_strategy.go): metadata validation, generation, and a status
// that only the status subresource writes when the CRD declares one; and
// the version's schema rules (version.go): pruning, defaulting, OpenAPI
// validation and x-kubernetes-validations.
// The scale subresource and printer columns come from the version's
// subresources and additionalPrinterColumns.
//
// crd must be a defaulted, valid v1 CustomResourceDefinition (as the
// apiserver stores one); version one of its served versions.
func ResourceFor(crd *apiextensionsv1.CustomResourceDefinition, version string) (*registry.Resource, error) {
	v := findVersion(crd, version)
	if v == nil {
		return nil, fmt.Errorf("crd: %s has no version %q", crd.Name, version)
	}
	storage := storageVersion(crd)
	if storage == "" {
		return nil, fmt.Errorf("crd: %s has no storage version", crd.Name)
	}
	names := crd.Status.AcceptedNames
	if names.Plural == "" {
		names = crd.Spec.Names
	}
	gv := schema.GroupVersion{Group: crd.Spec.Group, Version: version}
	gvk, listGVK := gv.WithKind(names.Kind), gv.WithKind(listKind(names))
	res := &registry.Resource{
		GroupVersion:     gv,
		Name:             names.Plural,
		SingularName:     singular(names),
		Kind:             names.Kind,
		ListKind:         listGVK.Kind,
		ShortNames:       names.ShortNames,
		Categories:       names.Categories,
		Namespaced:       crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
		Prefix:           "/registry/" + crd.Spec.Group + "/" + names.Plural,
		StorageMediaType: registry.MediaTypeJSON,
		StorageCodec:     newCodec(gvk, storage, conversionStrategy(crd)),
		NotCached:        version != storage && conversionStrategy(crd) == apiextensionsv1.WebhookConverter,
		TextOnly:         true,
		OpenAPIV3:        openAPIV3(crd, version),
		OpenAPIV2:        openAPIV2(crd, version),
		DeleteCollection: true,
		New: func() runtime.Object {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			return u
		},
		NewList: func() runtime.Object {
			l := &unstructured.UnstructuredList{}
			l.SetGroupVersionKind(listGVK)
			return l
		},
	}
	subs := v.Subresources
	hasStatus := subs != nil && subs.Status != nil
	st := newStrategy(hasStatus)
	var err error
	if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
		// The schema's rules (a valid v1 CRD always has a schema): on the
		// way in from a request, on every write, on the way out of etcd.
		if st.schema, err = NewVersion(crd, version); err != nil {
			return nil, fmt.Errorf("crd: %w", err)
		}
		res.Coerce = st.schema.coerceRequest
		// managedFields and server-side apply type objects by the schema.
		res.TypeConverter = st.schema.LazyTypeConverter()
		c := res.StorageCodec.(codec)
		c.schema = st.schema
		res.StorageCodec = c
	}
	res.Strategy = st.registryStrategy()
	if hasStatus {
		res.Subresources = append(res.Subresources, "status")
	}
	if subs != nil && subs.Scale != nil {
		res.Subresources = append(res.Subresources, "scale")
		res.Scale = scaleRules(subs.Scale)
	}
	printer, err := printerFor(v.AdditionalPrinterColumns)
	if err != nil {
		return nil, fmt.Errorf("crd: %s version %s: %w", crd.Name, version, err)
	}
	res.Printer = printer
	return res, nil
}

// ServedResources returns a descriptor for every served version of crd,
// in upstream's discovery order: by Kubernetes version priority (v2 before
// v1 before v1beta1 before v1alpha1), so the first is the group's
// preferred version, the one kubectl uses and flags such as
// --watch-cache-sizes resolve to.
func ServedResources(crd *apiextensionsv1.CustomResourceDefinition) ([]*registry.Resource, error) {
	var out []*registry.Resource
	for _, v := range orderedVersions(crd) {
		if !v.Served {
			continue
		}
		res, err := ResourceFor(crd, v.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}

// orderedVersions returns crd's versions by priority, highest first.
func orderedVersions(crd *apiextensionsv1.CustomResourceDefinition) []apiextensionsv1.CustomResourceDefinitionVersion {
	versions := slices.Clone(crd.Spec.Versions)
	slices.SortStableFunc(versions, func(a, b apiextensionsv1.CustomResourceDefinitionVersion) int {
		return -version.CompareKubeAwareVersionStrings(a.Name, b.Name)
	})
	return versions
}

func findVersion(crd *apiextensionsv1.CustomResourceDefinition, name string) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == name {
			return &crd.Spec.Versions[i]
		}
	}
	return nil
}

func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

func conversionStrategy(crd *apiextensionsv1.CustomResourceDefinition) apiextensionsv1.ConversionStrategyType {
	if c := crd.Spec.Conversion; c != nil && c.Strategy != "" {
		return c.Strategy
	}
	return apiextensionsv1.NoneConverter
}

// listKind is names.ListKind, or Kind+"List" as upstream defaults it.
func listKind(names apiextensionsv1.CustomResourceDefinitionNames) string {
	if names.ListKind != "" {
		return names.ListKind
	}
	return names.Kind + "List"
}

// singular is names.Singular, or the lower-cased kind as upstream defaults it.
func singular(names apiextensionsv1.CustomResourceDefinitionNames) string {
	if names.Singular != "" {
		return names.Singular
	}
	return strings.ToLower(names.Kind)
}
