package crd

import (
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const prunable = `
apiVersion: example.com/v1
kind: Widget
extra: dropped
metadata: {name: w, namespace: default, bogus: dropped}
spec:
  size: large
  unknown: dropped
  config: {anything: kept, nested: {deep: kept}}
  template:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: inner, bogus: dropped}
    data: {key: kept}
  ports:
  - {name: http, port: 80, protocol: dropped}
`

func TestCoerceDropsUnknownFieldsAndReportsTheirPaths(t *testing.T) {
	v := testVersion(t)
	u := widget(t, prunable)
	unknown, err := v.Coerce(u, true)
	if err != nil {
		t.Fatalf("Coerce: %v", err)
	}
	want := []string{"extra", "metadata.bogus", "spec.ports[0].protocol", "spec.template.metadata.bogus", "spec.unknown"}
	if !slices.Equal(slices.Sorted(slices.Values(unknown)), want) {
		t.Errorf("unknown fields = %q, want %q", unknown, want)
	}
	for _, path := range [][]string{{"extra"}, {"metadata", "bogus"}, {"spec", "unknown"}, {"spec", "template", "metadata", "bogus"}} {
		if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, path...); found {
			t.Errorf("%v is still there after pruning", path)
		}
	}
	// x-kubernetes-preserve-unknown-fields keeps a subtree as it is, and an
	// embedded resource keeps its apiVersion, kind and metadata.
	for path, want := range map[string]string{
		"spec.config.anything":        "kept",
		"spec.config.nested.deep":     "kept",
		"spec.template.kind":          "ConfigMap",
		"spec.template.metadata.name": "inner",
		"spec.template.data.key":      "kept",
		"metadata.name":               "w",
	} {
		got, _, _ := unstructured.NestedString(u.Object, splitPath(path)...)
		if got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
}

func TestCoerceWithoutTrackingReturnsNoPaths(t *testing.T) {
	u := widget(t, prunable)
	unknown, err := testVersion(t).Coerce(u, false)
	if err != nil || unknown != nil {
		t.Fatalf("Coerce = %q, %v; want no paths and no error", unknown, err)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "unknown"); found {
		t.Error("spec.unknown is still there")
	}
}

func TestCoerceRefusesMetadataOfTheWrongType(t *testing.T) {
	u := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, labels: [a]}}")
	if _, err := testVersion(t).Coerce(u, true); err == nil {
		t.Fatal("Coerce accepted metadata.labels as a list, want an error")
	}
}

func TestDefaultFillsTheSchemasDefaults(t *testing.T) {
	v := testVersion(t)
	u := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {image: nginx}}")
	v.Default(u)
	if got, _, _ := unstructured.NestedString(u.Object, "spec", "size"); got != "small" {
		t.Errorf("spec.size = %q, want the default small", got)
	}
	if got, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); got != 1 {
		t.Errorf("spec.replicas = %d, want the default 1", got)
	}
	u = widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {size: large}}")
	v.Default(u)
	if got, _, _ := unstructured.NestedString(u.Object, "spec", "size"); got != "large" {
		t.Errorf("spec.size = %q, want the value given, large", got)
	}
}

func TestFromStorageDefaultsAndRepairsGeneration(t *testing.T) {
	u := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {gone: x}}")
	if err := testVersion(t).FromStorage(u); err != nil {
		t.Fatalf("FromStorage: %v", err)
	}
	if u.GetGeneration() != 1 {
		t.Errorf("generation = %d, want 1", u.GetGeneration())
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "gone"); found {
		t.Error("spec.gone survived the read")
	}
	if got, _, _ := unstructured.NestedString(u.Object, "spec", "size"); got != "small" {
		t.Errorf("spec.size = %q, want the default small", got)
	}
}

func TestStoredObjectsAreReadByTheCurrentSchema(t *testing.T) {
	res, err := ResourceFor(testCRD(t), "v1")
	if err != nil {
		t.Fatal(err)
	}
	// Written before the schema dropped spec.gone and added the default.
	stored := []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","generation":3},"spec":{"gone":1}}`)
	obj, _, err := res.StorageCodec.Decode(stored, nil, &unstructured.Unstructured{})
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	u := obj.(*unstructured.Unstructured)
	if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "gone"); found {
		t.Error("spec.gone survived the read")
	}
	if got, _, _ := unstructured.NestedString(u.Object, "spec", "size"); got != "small" {
		t.Errorf("spec.size = %q, want the default small", got)
	}
	if u.GetGeneration() != 3 {
		t.Errorf("generation = %d, want the stored 3", u.GetGeneration())
	}
}

func TestEachServedVersionShapesObjectsByItsOwnSchema(t *testing.T) {
	crd := testCRD(t)
	v2 := *crd.Spec.Versions[0].DeepCopy()
	v2.Name, v2.Storage = "v2", false
	// v2 renamed size to flavor, with a default of its own.
	spec := v2.Schema.OpenAPIV3Schema.Properties["spec"]
	delete(spec.Properties, "size")
	spec.Properties["flavor"] = apiextensionsv1.JSONSchemaProps{Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"vanilla"`)}}
	v2.Schema.OpenAPIV3Schema.Properties["spec"] = spec
	crd.Spec.Versions = append(crd.Spec.Versions, v2)

	res, err := ResourceFor(crd, "v2")
	if err != nil {
		t.Fatal(err)
	}
	// Stored at v1 (the storage version), read at v2.
	stored := []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":"large","replicas":2}}`)
	obj, _, err := res.StorageCodec.Decode(stored, nil, &unstructured.Unstructured{})
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	u := obj.(*unstructured.Unstructured)
	spec2, _, _ := unstructured.NestedMap(u.Object, "spec")
	if u.GetAPIVersion() != "example.com/v2" || spec2["size"] != nil || spec2["flavor"] != "vanilla" || spec2["replicas"] != int64(2) {
		t.Errorf("read at v2: apiVersion %s, spec %v; want v2's shape: no size, flavor vanilla, replicas 2", u.GetAPIVersion(), spec2)
	}

	req := widget(t, "{apiVersion: example.com/v2, kind: Widget, metadata: {name: w}, spec: {size: large}}")
	unknown, err := res.Coerce(req, true)
	if err != nil || !slices.Equal(unknown, []string{"spec.size"}) {
		t.Errorf("Coerce at v2 = %q, %v; want spec.size unknown", unknown, err)
	}
}
