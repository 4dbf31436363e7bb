package crd

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"minicp/internal/testsupport"
)

// widgetsCRD is the CRD the unit tests use: one namespaced version with
// status and scale subresources and a schema with an enum, defaults,
// bounds, a preserved subtree, an embedded resource, a map-list and CEL
// rules (one of them a transition rule).
const widgetsCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas"
              message: minReplicas must not exceed maxReplicas
            properties:
              size: {type: string, enum: [small, large], default: small}
              replicas: {type: integer, minimum: 0, default: 1}
              minReplicas: {type: integer}
              maxReplicas: {type: integer}
              image: {type: string, maxLength: 20}
              class:
                type: string
                x-kubernetes-validations:
                - {rule: "self == oldSelf", message: class is immutable}
              config: {type: object, x-kubernetes-preserve-unknown-fields: true}
              template:
                type: object
                x-kubernetes-embedded-resource: true
                x-kubernetes-preserve-unknown-fields: true
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer}
          status:
            type: object
            properties:
              replicas: {type: integer}
              phase: {type: string}
`

// testCRD decodes widgetsCRD.
func testCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	return testsupport.DecodeCRD(t, widgetsCRD)
}

// testVersion compiles version v1 of widgetsCRD.
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
