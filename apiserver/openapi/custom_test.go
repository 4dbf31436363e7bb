package openapi

import (
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/util/proto"

	"minicp/internal/testsupport"
	"minicp/kinds"
	"minicp/registry"
)

// gadgetResources are the descriptors of testsupport.GadgetsCRD's versions.
func gadgetResources(t *testing.T) []*registry.Resource {
	t.Helper()
	return servedResourcesOf(t, testsupport.GadgetsCRD)
}

func TestOpenAPIFollowsCustomResourcesInTheTable(t *testing.T) {
	gadgets := gadgetResources(t)
	table := kinds.NewTable()
	srv := httptest.NewServer(New(table))
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
	table := kinds.NewTable()
	srv := httptest.NewServer(New(table))
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

// A change of the table never waits for a document being built:
// subscribers are told under the table's writer lock, and every CRD's
// coming and going goes through it. The document built from the table
// before the change still answers its request, but the next request sees
// the change.
func TestATableChangeDoesNotWaitForAnOpenAPIBuild(t *testing.T) {
	gadgets, widgets := gadgetResources(t), servedResourcesOf(t, testsupport.WidgetsCRD)
	building, release := make(chan struct{}), make(chan struct{})
	var blockOnce sync.Once
	describe := gadgets[0].OpenAPIV3
	gadgets[0].OpenAPIV3 = func() (*spec3.OpenAPI, error) { // the first build waits for release
		blockOnce.Do(func() { close(building); <-release })
		return describe()
	}
	table := kinds.NewTable()
	if err := table.Change(nil, gadgets); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(table))
	t.Cleanup(srv.Close)
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before srv.Close, which waits for the blocked request
	gv := schema.GroupVersion{Group: "example.com", Version: "v1"}

	firstAnswered, root := make(chan error, 1), openAPIRoot(t, srv)
	go func() {
		_, err := root.GroupVersions()
		firstAnswered <- err
	}()
	select {
	case <-building:
	case <-time.After(30 * time.Second):
		t.Fatal("the first request did not start building the documents")
	}
	changed := make(chan error, 1)
	go func() { changed <- table.Change(nil, widgets) }()
	select {
	case err := <-changed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("adding a resource waited 10 s for the OpenAPI build in progress")
	}
	unblock()
	if err := <-firstAnswered; err != nil {
		t.Fatalf("the request that built during the change: %v", err)
	}
	doc, err := openAPIRoot(t, srv).GVSpec(gv)
	if err != nil {
		t.Fatalf("GVSpec: %v", err)
	}
	for _, kind := range []string{"com.example.v1.Gadget", "com.example.v1.Widget"} {
		if doc.Components.Schemas[kind] == nil {
			t.Errorf("after the change, example.com/v1's document lacks %s: a document built before it was kept", kind)
		}
	}
}
