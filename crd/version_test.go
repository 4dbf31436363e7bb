package crd

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"minicp/internal/testsupport"
)

// testCRD decodes testsupport.WidgetsCRD.
func testCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	return testsupport.DecodeCRD(t, testsupport.WidgetsCRD)
}

// testVersion compiles version v1 of testsupport.WidgetsCRD.
func testVersion(t *testing.T) *Version {
	t.Helper()
	v, err := NewVersion(testCRD(t), "v1")
	if err != nil {
		t.Fatalf("NewVersion: %v", err)
	}
	return v
}

// widget decodes an object from YAML as a request body is decoded
// (integers as int64).
func widget(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatalf("decoding the test object: %v", err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		t.Fatalf("decoding the test object: %v", err)
	}
	return u
}

func TestNewVersionRefusesAVersionTheCRDDoesNotHave(t *testing.T) {
	if _, err := NewVersion(testCRD(t), "v2"); err == nil {
		t.Fatal("NewVersion(v2) succeeded, want an error")
	}
}

func TestNewVersionDescribesTheVersion(t *testing.T) {
	v := testVersion(t)
	if got := v.GroupVersionKind().String(); got != "example.com/v1, Kind=Widget" {
		t.Errorf("GroupVersionKind = %s", got)
	}
	if !v.Namespaced() || !v.HasStatus() {
		t.Errorf("Namespaced = %v, HasStatus = %v, want both true", v.Namespaced(), v.HasStatus())
	}
}
