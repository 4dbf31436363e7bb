package testsupport

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// DecodeCRD decodes a CustomResourceDefinition written in YAML, as the
// tests write their CRDs, failing the test on an unknown or misspelt
// field.
func DecodeCRD(t testing.TB, manifest string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	def := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict([]byte(manifest), def); err != nil {
		t.Fatalf("decoding the test CRD: %v", err)
	}
	return def
}

// WidgetsCRD is the CRD the unit tests of crd and apiserver use: one
// namespaced version with status and scale subresources and a schema with
// an enum, defaults, bounds, a preserved subtree, an embedded resource, a
// map-list (merged by key, which apply's tests need) and CEL rules (one
// of them a transition rule).
const WidgetsCRD = `
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
