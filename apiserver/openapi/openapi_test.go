package openapi

import (
	"encoding/json"
	"minicp/internal/testsupport"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/openapi3"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/spec3"
	protomodels "k8s.io/kube-openapi/pkg/util/proto"
	"sigs.k8s.io/yaml"

	"minicp/registry"
)

func newOpenAPIServer(t *testing.T) *httptest.Server {
	t.Helper()
	h := New(testResources)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		testResources.Unsubscribe(h)
	})
	return srv
}

// openAPIRoot reads the server's OpenAPI v3 through client-go, as kubectl does.
func openAPIRoot(t *testing.T, srv *httptest.Server) openapi3.Root {
	t.Helper()
	client, err := rest.RESTClientFor(&rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{
		GroupVersion: &schema.GroupVersion{}, NegotiatedSerializer: registry.Codecs.WithoutConversion(),
	}})
	if err != nil {
		t.Fatal(err)
	}
	return openapi3.NewRoot(openapi.NewClient(client))
}

// patchOperation finds the PATCH operation of gvk on a path without
// subresource, as kubectl's field validation check does.
func patchOperation(doc *spec3.OpenAPI, gvk schema.GroupVersionKind) (string, *spec3.Operation) {
	for path, item := range doc.Paths.Paths {
		if item == nil || item.Patch == nil || strings.HasSuffix(path, "/status") {
			continue
		}
		var got map[string]string
		if err := item.Patch.Extensions.GetObject("x-kubernetes-group-version-kind", &got); err != nil {
			continue
		}
		if got["group"] == gvk.Group && got["version"] == gvk.Version && got["kind"] == gvk.Kind {
			return path, item.Patch
		}
	}
	return "", nil
}

func TestEveryKindHasAPatchOperationWithFieldValidation(t *testing.T) {
	root := openAPIRoot(t, newOpenAPIServer(t))
	gvs, err := root.GroupVersions()
	if err != nil {
		t.Fatalf("GroupVersions: %v", err)
	}
	if len(gvs) != len(servedGroups()) {
		t.Errorf("index lists %v, want one document per group: %v", gvs, servedGroups())
	}
	for _, r := range testResources.All() {
		doc, err := root.GVSpec(r.GroupVersion)
		if err != nil {
			t.Fatalf("GVSpec(%v): %v", r.GroupVersion, err)
		}
		path, op := patchOperation(doc, r.GroupVersionKind())
		if op == nil {
			t.Errorf("%s: no PATCH operation tagged with its group-version-kind", r.Kind)
			continue
		}
		found := false
		for _, p := range op.Parameters {
			found = found || (p.Name == "fieldValidation" && p.In == "query")
		}
		if !found {
			t.Errorf("%s: PATCH %s has no fieldValidation query parameter", r.Kind, path)
		}
		if _, ok := op.RequestBody.Content["application/strategic-merge-patch+json"]; !ok {
			t.Errorf("%s: PATCH %s does not accept strategic merge patches", r.Kind, path)
		}
		if _, ok := op.RequestBody.Content["application/apply-patch+yaml"]; !ok {
			t.Errorf("%s: PATCH %s does not accept server-side apply", r.Kind, path)
		}
	}
}

func TestSchemasCarryTheKindAndPatchHintsKubectlApplyUses(t *testing.T) {
	root := openAPIRoot(t, newOpenAPIServer(t))
	doc, err := root.GVSpec(schema.GroupVersion{Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	pod := doc.Components.Schemas["io.k8s.api.core.v1.Pod"]
	if pod == nil {
		t.Fatal("no io.k8s.api.core.v1.Pod schema")
	}
	var gvks []map[string]string
	if err := pod.Extensions.GetObject("x-kubernetes-group-version-kind", &gvks); err != nil || len(gvks) != 1 || gvks[0]["kind"] != "Pod" {
		t.Errorf("Pod schema group-version-kind: got %v (%v)", gvks, err)
	}
	// A three-way strategic merge patch computed from the schema must merge
	// containers by name, as one computed from the Go types does.
	original := []byte(`{"spec":{"containers":[{"name":"app","image":"a:1"}]}}`)
	modified := []byte(`{"spec":{"containers":[{"name":"app","image":"a:2"}]}}`)
	current := []byte(`{"spec":{"containers":[{"name":"app","image":"a:1"},{"name":"injected","image":"sidecar"}]}}`)
	meta := strategicpatch.PatchMetaFromOpenAPIV3{Schema: pod, SchemaList: doc.Components.Schemas}
	patch, err := strategicpatch.CreateThreeWayMergePatch(original, modified, current, meta, false)
	if err != nil {
		t.Fatalf("CreateThreeWayMergePatch: %v", err)
	}
	var got, want any
	if err := json.Unmarshal(patch, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"spec":{"$setElementOrder/containers":[{"name":"app"}],"containers":[{"image":"a:2","name":"app"}]}}`), &want); err != nil {
		t.Fatal(err)
	}
	if string(jsonOf(t, got)) != string(jsonOf(t, want)) {
		t.Errorf("patch: got %s, want %s", patch, jsonOf(t, want))
	}
}

func jsonOf(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSchemasDescribeFieldsForKubectlExplain(t *testing.T) {
	root := openAPIRoot(t, newOpenAPIServer(t))
	doc, err := root.GVSpec(schema.GroupVersion{Group: "coordination.k8s.io", Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	spec := doc.Components.Schemas["io.k8s.api.coordination.v1.LeaseSpec"]
	if spec == nil {
		t.Fatal("no LeaseSpec schema")
	}
	renew, ok := spec.Properties["renewTime"]
	if !ok || !strings.Contains(renew.Description, "renew") {
		t.Errorf("renewTime: got %+v, want a description", renew)
	}
	micro := doc.Components.Schemas["io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"]
	if micro == nil || len(micro.Type) != 1 || micro.Type[0] != "string" || micro.Format != "date-time" {
		t.Errorf("MicroTime: got %+v, want a date-time string", micro)
	}
}

func TestOpenAPIDocumentHashIsCacheableAndOutdatedHashesRedirect(t *testing.T) {
	srv := newOpenAPIServer(t)
	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	testsupport.GetDocument(t, srv, "/openapi/v3", "application/json", &index)
	url := index.Paths["api/v1"].ServerRelativeURL
	if !strings.HasPrefix(url, "/openapi/v3/api/v1?hash=") {
		t.Fatalf("api/v1 URL: got %q", url)
	}
	resp, err := srv.Client().Get(srv.URL + url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != "public, immutable" || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("current hash: got %d %v", resp.StatusCode, resp.Header)
	}

	noRedirect := *srv.Client()
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err = noRedirect.Get(srv.URL + "/openapi/v3/api/v1?hash=0BSOLETE")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != url {
		t.Errorf("outdated hash: got %d to %q, want 301 to %q", resp.StatusCode, resp.Header.Get("Location"), url)
	}
}

func TestUnknownOpenAPIGroupVersionIsNotFound(t *testing.T) {
	srv := newOpenAPIServer(t)
	r := testsupport.Fetch(t, srv, http.MethodGet, "/openapi/v3/apis/certificates.k8s.io/v1", "")
	if status := r.Status(t); r.Code != http.StatusNotFound || status.Reason != metav1.StatusReasonNotFound {
		t.Errorf("got %d %+v, want 404 NotFound Status", r.Code, status)
	}
}

// openAPIV2Client returns a discovery client of the server at url. Each
// change of the table re-encodes the whole v2 document: about 4 s under
// -race on a quiet machine, and more than the discovery client's default
// 32 s timeout at a load of 25. The tests check what the document says,
// not how fast it is built, so the client waits up to 3 minutes.
func openAPIV2Client(t *testing.T, url string) *discovery.DiscoveryClient {
	t.Helper()
	client, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: url, Timeout: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// kubectl 1.27 and 1.28 read /openapi/v2, as protobuf, for apply and
// explain, and check field validation support in it.
func TestOpenAPIV2ServesWhatOlderKubectlReads(t *testing.T) {
	srv := newOpenAPIServer(t)
	client := openAPIV2Client(t, srv.URL)
	doc, err := client.OpenAPISchema()
	if err != nil {
		t.Fatalf("OpenAPISchema: %v", err)
	}
	models, err := protomodels.NewOpenAPIData(doc)
	if err != nil {
		t.Fatalf("kubectl's model parser rejects the document: %v", err)
	}
	for _, r := range testResources.All() {
		// Named from the Go package, as upstream: k8s.io/api/rbac/v1.Role
		// is io.k8s.api.rbac.v1.Role.
		typ := reflect.TypeOf(r.New()).Elem()
		name := "io.k8s." + strings.ReplaceAll(strings.TrimPrefix(typ.PkgPath(), "k8s.io/"), "/", ".") + "." + typ.Name()
		if models.LookupModel(name) == nil {
			t.Errorf("no model %s", name)
		}
		if !v2PatchHasFieldValidation(doc, r.GroupVersionKind()) {
			t.Errorf("%s: no PATCH operation with its group-version-kind and a fieldValidation query parameter", r.Kind)
		}
	}
	containers := models.LookupModel("io.k8s.api.core.v1.PodSpec").(*protomodels.Kind).Fields["containers"]
	if ext := containers.GetExtensions(); ext["x-kubernetes-patch-merge-key"] != "name" || ext["x-kubernetes-patch-strategy"] != "merge" {
		t.Errorf("PodSpec.containers extensions: got %v, want merge by name", ext)
	}
}

// v2PatchHasFieldValidation looks for gvk's PATCH operation and its
// fieldValidation query parameter as kubectl 1.27 does.
func v2PatchHasFieldValidation(doc *openapiv2.Document, gvk schema.GroupVersionKind) bool {
	for _, path := range doc.GetPaths().GetPath() {
		op := path.GetValue().GetPatch()
		if op == nil {
			continue
		}
		var got map[string]string
		for _, ext := range op.GetVendorExtension() {
			if ext.GetName() == "x-kubernetes-group-version-kind" {
				if err := yaml.Unmarshal([]byte(ext.GetValue().GetYaml()), &got); err != nil {
					return false
				}
			}
		}
		if got["group"] != gvk.Group || got["version"] != gvk.Version || got["kind"] != gvk.Kind {
			continue
		}
		for _, p := range op.GetParameters() {
			if p.GetParameter().GetNonBodyParameter().GetQueryParameterSubSchema().GetName() == "fieldValidation" {
				return true
			}
		}
	}
	return false
}
