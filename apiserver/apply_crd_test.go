package apiserver

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/crd"
	"minicp/internal/testsupport"
	"minicp/registry"
)

const widgetsPath = "/apis/example.com/v1/namespaces/default/widgets"

func startWithWidgets(t *testing.T) *testServer {
	t.Helper()
	return startWithResources(t, servedResourcesOf(t, testsupport.WidgetsCRD))
}

// servedResourcesOf decodes a CRD written in YAML and returns the
// descriptors of its served versions.
func servedResourcesOf(t *testing.T, manifest string) []*registry.Resource {
	t.Helper()
	resources, err := crd.ServedResources(testsupport.DecodeCRD(t, manifest))
	if err != nil {
		t.Fatal(err)
	}
	return resources
}

// widget decodes a Widget response.
type widget struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     struct {
		Replicas int `json:"replicas"`
		Ports    []struct {
			Name string `json:"name"`
			Port int    `json:"port"`
		} `json:"ports"`
	} `json:"spec"`
	Status struct {
		Replicas int `json:"replicas"`
	} `json:"status"`
}

func decodeWidget(t *testing.T, r rawResponse) widget {
	t.Helper()
	var w widget
	if err := json.Unmarshal(r.body, &w); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
	return w
}

func findEntry(entries []metav1.ManagedFieldsEntry, manager string, op metav1.ManagedFieldsOperationType) *metav1.ManagedFieldsEntry {
	for i := range entries {
		if entries[i].Manager == manager && entries[i].Operation == op {
			return &entries[i]
		}
	}
	return nil
}

const applyYAML = "Content-Type: application/apply-patch+yaml"

// Server-side apply on a custom resource types it by its CRD's schema: a
// list-type map merges two managers' items by key, a field one manager
// owns is a conflict for another, and writes through status and scale
// record their subresource.
func TestApplyToACustomResourceMergesByTheCRDSchema(t *testing.T) {
	ts := startWithWidgets(t)
	r := ts.do(t, "PATCH", widgetsPath+"/w?fieldManager=alice", `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec:
  replicas: 1
  ports: [{name: http, port: 80}]
`, applyYAML)
	if r.code != http.StatusCreated {
		t.Fatalf("apply creating a widget: %d %s", r.code, r.body)
	}
	if e := findEntry(decodeWidget(t, r).Metadata.ManagedFields, "alice", metav1.ManagedFieldsOperationApply); e == nil || !strings.Contains(string(e.FieldsV1.Raw), `"k:{\"name\":\"http\"}"`) {
		t.Errorf("alice's entry = %+v, want the http port owned by its key", e)
	}

	r = ts.do(t, "PATCH", widgetsPath+"/w?fieldManager=bob", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec:\n  ports: [{name: https, port: 443}]\n", applyYAML)
	if r.code != http.StatusOK {
		t.Fatalf("bob's apply: %d %s", r.code, r.body)
	}
	if w := decodeWidget(t, r); len(w.Spec.Ports) != 2 || w.Spec.Replicas != 1 {
		t.Errorf("after bob's apply: %+v, want both ports (merged by name) and alice's replicas", w.Spec)
	}

	r = ts.do(t, "PATCH", widgetsPath+"/w?fieldManager=bob", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec:\n  replicas: 5\n  ports: [{name: https, port: 443}]\n", applyYAML)
	st := r.status(t)
	if r.code != http.StatusConflict || st.Reason != metav1.StatusReasonConflict || st.Details == nil || len(st.Details.Causes) != 1 ||
		st.Details.Causes[0].Field != ".spec.replicas" || !strings.Contains(st.Message, `conflict with "alice"`) {
		t.Fatalf("bob's apply of alice's replicas: %d %+v, want 409 naming alice and .spec.replicas", r.code, st)
	}

	r = ts.do(t, "PATCH", widgetsPath+"/w/status?fieldManager=controller", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nstatus: {replicas: 1}\n", applyYAML)
	if r.code != http.StatusOK {
		t.Fatalf("status apply: %d %s", r.code, r.body)
	}
	if e := findEntry(decodeWidget(t, r).Metadata.ManagedFields, "controller", metav1.ManagedFieldsOperationApply); e == nil || e.Subresource != "status" {
		t.Errorf("controller's entry = %+v, want one on the status subresource", e)
	}

	r = ts.do(t, "PATCH", widgetsPath+"/w/scale?fieldManager=scaler", `{"spec":{"replicas":3}}`, "Content-Type: application/merge-patch+json")
	if r.code != http.StatusOK {
		t.Fatalf("scale: %d %s", r.code, r.body)
	}
	w := decodeWidget(t, ts.do(t, "GET", widgetsPath+"/w", ""))
	if w.Spec.Replicas != 3 {
		t.Errorf("replicas = %d after scaling, want 3", w.Spec.Replicas)
	}
	e := findEntry(w.Metadata.ManagedFields, "scaler", metav1.ManagedFieldsOperationUpdate)
	if e == nil || e.Subresource != "scale" || e.APIVersion != "example.com/v1" || !strings.Contains(string(e.FieldsV1.Raw), `"f:replicas"`) {
		t.Errorf("scaler's entry = %+v, want example.com/v1 on the scale subresource owning spec.replicas", e)
	}
	if e := findEntry(w.Metadata.ManagedFields, "alice", metav1.ManagedFieldsOperationApply); e == nil || strings.Contains(string(e.FieldsV1.Raw), `"f:replicas"`) {
		t.Errorf("alice's entry = %+v, want it to have lost spec.replicas to the scale", e)
	}
}
