package apiserver

import (
	"net/http/httptest"
	"slices"
	"testing"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/util/proto"

	"minicp/registry"
)

const gadgetsCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            description: what the gadget should be
            properties:
              color: {type: string, description: the gadget's color, enum: [red, blue], default: red}
              size: {type: integer, minimum: 1}
              config: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// gadgetResources are the descriptors of gadgetsCRD's versions.
func gadgetResources(t *testing.T) []*registry.Resource {
	t.Helper()
	return servedResourcesOf(t, gadgetsCRD)
}

func TestOpenAPIFollowsCustomResourcesInTheTable(t *testing.T) {
	gadgets := gadgetResources(t)
	table := registry.NewBuiltinTable()
	srv := httptest.NewServer(newOpenAPIHandler(table))
	t.Cleanup(srv.Close)
	gv := schema.GroupVersion{Group: "example.com", Version: "v1"}

	listed := func() bool {
		gvs, err := openAPIRoot(t, srv).GroupVersions()
		if err != nil {
			t.Fatalf("GroupVersions: %v", err)
		}
		return slices.Contains(gvs, gv)
	}
	if listed() {
		t.Fatal("the index lists example.com/v1 before its CRD is served")
	}

	if err := table.Change(nil, gadgets); err != nil {
		t.Fatal(err)
	}
	if !listed() {
		t.Fatal("the index does not list example.com/v1 once its CRD is served")
	}
	doc, err := openAPIRoot(t, srv).GVSpec(gv)
	if err != nil {
		t.Fatalf("GVSpec: %v", err)
	}
	path, op := patchOperation(doc, gv.WithKind("Gadget"))
	if op == nil {
		t.Fatal("no PATCH operation tagged with example.com/v1 Gadget")
	}
	found := false
	for _, p := range op.Parameters {
		found = found || (p.Name == "fieldValidation" && p.In == "query")
	}
	if !found {
		t.Errorf("PATCH %s has no fieldValidation query parameter", path)
	}
	kind := doc.Components.Schemas["com.example.v1.Gadget"]
	if kind == nil {
		t.Fatalf("no schema com.example.v1.Gadget among %d", len(doc.Components.Schemas))
	}
	color := kind.Properties["spec"].Properties["color"]
	if color.Description != "the gadget's color" {
		t.Errorf("spec.color's description = %q, want the CRD's", color.Description)
	}
	if _, ok := kind.Properties["metadata"]; !ok {
		t.Error("the kind's schema has no metadata")
	}
	if doc.Components.Schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"] == nil {
		t.Error("the document lacks the ObjectMeta schema its kind refers to")
	}

	if err := table.Change(gadgets, nil); err != nil {
		t.Fatal(err)
	}
	if listed() {
		t.Fatal("the index still lists example.com/v1 after its CRD left")
	}
}

// kubectl 1.27 and 1.28 find custom resources in /openapi/v2.
func TestOpenAPIV2FollowsCustomResourcesInTheTable(t *testing.T) {
	gadgets := gadgetResources(t)
	table := registry.NewBuiltinTable()
	srv := httptest.NewServer(newOpenAPIHandler(table))
	t.Cleanup(srv.Close)
	client := openAPIV2Client(t, srv.URL)
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gadget"}
	models := func() (proto.Models, *openapiv2.Document) {
		doc, err := client.OpenAPISchema()
		if err != nil {
			t.Fatalf("OpenAPISchema: %v", err)
		}
		models, err := proto.NewOpenAPIData(doc)
		if err != nil {
			t.Fatalf("kubectl's model parser rejects the document: %v", err)
		}
		return models, doc
	}
	if m, _ := models(); m.LookupModel("com.example.v1.Gadget") != nil {
		t.Fatal("/openapi/v2 describes Gadgets before their CRD is served")
	}
	if err := table.Change(nil, gadgets); err != nil {
		t.Fatal(err)
	}
	m, doc := models()
	gadget, ok := m.LookupModel("com.example.v1.Gadget").(*proto.Kind)
	if !ok {
		t.Fatal("/openapi/v2 has no model com.example.v1.Gadget once its CRD is served")
	}
	if _, ok := gadget.Fields["spec"]; !ok {
		t.Errorf("the Gadget model has no spec: %v", gadget.Keys())
	}
	if !v2PatchHasFieldValidation(doc, gvk) {
		t.Error("no PATCH operation of Gadget with a fieldValidation query parameter")
	}
	if m.LookupModel("io.k8s.api.core.v1.Pod") == nil {
		t.Error("the built-in models are gone")
	}
	if err := table.Change(gadgets, nil); err != nil {
		t.Fatal(err)
	}
	if m, _ := models(); m.LookupModel("com.example.v1.Gadget") != nil {
		t.Fatal("/openapi/v2 still describes Gadgets after their CRD left")
	}
}
