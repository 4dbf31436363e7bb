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
