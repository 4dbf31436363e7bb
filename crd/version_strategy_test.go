package crd

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"minicp/registry/rest"
)

// testStrategy is the registry Strategy of version v1 of crd.
func testStrategy(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) *rest.Strategy {
	t.Helper()
	res, err := ResourceFor(crd, "v1")
	if err != nil {
		t.Fatalf("ResourceFor: %v", err)
	}
	return res.Strategy
}

func TestCreateDropsStatusAndStartsGenerationAtOne(t *testing.T) {
	st := testStrategy(t, testCRD(t))
	u := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {unknown: x}, status: {phase: Ready}}")
	st.PrepareForCreate(u)
	if _, found := u.Object["status"]; found {
		t.Error("status survived a create of a kind with the status subresource")
	}
	if u.GetGeneration() != 1 {
		t.Errorf("generation = %d, want 1", u.GetGeneration())
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "unknown"); found {
		t.Error("spec.unknown survived a create")
	}
	if got, _, _ := unstructured.NestedString(u.Object, "spec", "size"); got != "small" {
		t.Errorf("spec.size = %q, want the default small", got)
	}
}

func TestMainUpdateKeepsStoredStatusAndBumpsGenerationOnSpecChanges(t *testing.T) {
	st := testStrategy(t, testCRD(t))
	old := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, generation: 4}, spec: {size: small, replicas: 1}, status: {phase: Ready}}")

	u := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, generation: 4, labels: {a: b}}, spec: {size: small, replicas: 1}, status: {phase: Hacked}}")
	st.PrepareForUpdate(u, old)
	if got, _, _ := unstructured.NestedString(u.Object, "status", "phase"); got != "Ready" {
		t.Errorf("status.phase = %q, want the stored Ready", got)
	}
	if u.GetGeneration() != 4 {
		t.Errorf("generation after a metadata-only change = %d, want 4", u.GetGeneration())
	}

	u = widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, generation: 4}, spec: {size: large, replicas: 1}}")
	st.PrepareForUpdate(u, old)
	if u.GetGeneration() != 5 {
		t.Errorf("generation after a spec change = %d, want 5", u.GetGeneration())
	}
	if got, _, _ := unstructured.NestedString(u.Object, "status", "phase"); got != "Ready" {
		t.Errorf("status.phase = %q, want the stored Ready back", got)
	}
}

func TestStatusUpdateKeepsEverythingButStatus(t *testing.T) {
	st := testStrategy(t, testCRD(t))
	if st.PrepareForStatusUpdate == nil || st.ValidateStatusUpdate == nil {
		t.Fatal("the strategy of a version with the status subresource has no status rules")
	}
	old := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, generation: 2, labels: {a: b}}, spec: {size: small, replicas: 1}}")
	u := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, generation: 2}, spec: {size: large, replicas: 9}, status: {phase: Ready, replicas: 1}}")
	st.PrepareForStatusUpdate(u, old)
	if got, _, _ := unstructured.NestedString(u.Object, "spec", "size"); got != "small" {
		t.Errorf("spec.size = %q, want the stored small", got)
	}
	if got, _, _ := unstructured.NestedString(u.Object, "status", "phase"); got != "Ready" {
		t.Errorf("status.phase = %q, want Ready", got)
	}
	if errs := st.ValidateStatusUpdate(u, old); len(errs) > 0 {
		t.Errorf("ValidateStatusUpdate = %q, want no error", errorStrings(errs))
	}
}

func TestStrategyOfAVersionWithoutStatusServesNoStatus(t *testing.T) {
	crd := testCRD(t)
	crd.Spec.Versions[0].Subresources = nil
	st := testStrategy(t, crd)
	if st.PrepareForStatusUpdate != nil {
		t.Error("PrepareForStatusUpdate is set, want nil (no /status)")
	}
	u := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {replicas: 1}, status: {phase: Ready}}")
	st.PrepareForCreate(u)
	if got, _, _ := unstructured.NestedString(u.Object, "status", "phase"); got != "Ready" {
		t.Errorf("status.phase = %q, want Ready kept: without the subresource status is an ordinary field", got)
	}
}

func TestStrategyChecksTheSchemaOnCreateAndUpdate(t *testing.T) {
	st := testStrategy(t, testCRD(t))
	if st.Validate != nil {
		t.Fatal("Validate is set: an update would be checked twice, without ratcheting")
	}
	bad := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {size: huge}}")
	st.PrepareForCreate(bad)
	wantErrors(t, st.ValidateCreate(bad), `spec.size: Unsupported value: "huge"`, `some validation rules were not checked`)

	old := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {class: gold}}")
	st.PrepareForCreate(old)
	u := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {class: silver}}")
	st.PrepareForUpdate(u, old)
	wantErrors(t, st.ValidateUpdate(u, old), `spec.class: Invalid value: "silver": class is immutable`)
}

func TestAVersionWithoutASchemaHasNoSchemaRules(t *testing.T) {
	crd := testCRD(t)
	crd.Spec.Versions[0].Schema = nil
	st := testStrategy(t, crd)
	if st.ValidateCreate != nil || st.ValidateUpdate != nil {
		t.Fatal("a version without a schema has schema checks")
	}
	u := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {anything: 1}}")
	st.PrepareForCreate(u)
	if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "anything"); !found {
		t.Error("spec.anything was pruned without a schema")
	}
}
