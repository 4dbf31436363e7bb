package crd

// The scale subresource of a custom resource, as its CRD declares it:
// specReplicasPath, statusReplicasPath and labelSelectorPath are simple
// JSON paths (".spec.replicas") into the object (validated so by the
// CRD's validation), read and written on the Unstructured.

import (
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"minicp/registry"
)

// scaleRules maps a custom resource to and from autoscaling/v1 Scale.
func scaleRules(scale *apiextensionsv1.CustomResourceSubresourceScale) *registry.ScaleRules {
	specPath := fieldPath(scale.SpecReplicasPath)
	statusPath := fieldPath(scale.StatusReplicasPath)
	var selectorPath []string
	if scale.LabelSelectorPath != nil {
		selectorPath = fieldPath(*scale.LabelSelectorPath)
	}
	return &registry.ScaleRules{
		Replicas: func(obj runtime.Object) (spec, status int32, selector string) {
			u := asUnstructured(obj)
			spec = int32(nestedInt(u.Object, specPath))
			status = int32(nestedInt(u.Object, statusPath))
			if len(selectorPath) > 0 {
				selector, _, _ = unstructured.NestedString(u.Object, selectorPath...)
			}
			return spec, status, selector
		},
		SetReplicas: func(obj runtime.Object, replicas int32) {
			u := asUnstructured(obj)
			// The path is valid (CRD validation), so setting cannot fail.
			_ = unstructured.SetNestedField(u.Object, int64(replicas), specPath...)
		},
		// A manager that scales owns the object's field at specPath.
		ReplicasPath: managedPath(specPath),
	}
}

// managedPath is path as managedFields name it.
func managedPath(path []string) fieldpath.Path {
	parts := make([]any, len(path))
	for i, p := range path {
		parts[i] = p
	}
	return fieldpath.MakePathOrDie(parts...)
}

// fieldPath turns ".spec.replicas" into ["spec", "replicas"].
func fieldPath(jsonPath string) []string {
	return strings.Split(strings.TrimPrefix(jsonPath, "."), ".")
}

// nestedInt reads an integer that JSON may have decoded as int64 or float64.
func nestedInt(obj map[string]any, path []string) int64 {
	v, found, err := unstructured.NestedFieldNoCopy(obj, path...)
	if !found || err != nil {
		return 0
	}
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int:
		return int64(n)
	}
	return 0
}
