package crd

// The OpenAPI v3 description of a custom resource version, built from its
// CRD's schema by apiextensions' own OpenAPI builder, as upstream serves
// it under /openapi/v3/apis/<group>/<version>: the paths of every verb
// (each operation tagged with x-kubernetes-group-version-kind and, for
// writes, the fieldValidation parameter kubectl looks for), the kind's
// schema with apiVersion, kind and metadata added, its list kind, and the
// metadata types they refer to. `kubectl explain` reads the schema;
// kubectl create and apply find the PATCH operation and send
// fieldValidation=Strict. The same description in OpenAPI v2 (Swagger)
// goes into /openapi/v2, which kubectl 1.27 and 1.28 still read; as
// upstream's, a preserved root is a plain object there.

import (
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// openAPIV3 returns a function that builds the OpenAPI v3 document of
// version of crd on its first call and returns the same one afterwards
// (the document is read-only). Building takes milliseconds, which a stack
// that never serves OpenAPI should not pay when a CRD is established.
func openAPIV3(crd *apiextensionsv1.CustomResourceDefinition, version string) func() (*spec3.OpenAPI, error) {
	crd = crd.DeepCopy()
	var (
		once sync.Once
		doc  *spec3.OpenAPI
		err  error
	)
	return func() (*spec3.OpenAPI, error) {
		once.Do(func() {
			doc, err = builder.BuildOpenAPIV3(crd, version, builder.Options{V2: false})
		})
		return doc, err
	}
}

// openAPIV2 is openAPIV3's Swagger 2.0 twin, for /openapi/v2.
func openAPIV2(crd *apiextensionsv1.CustomResourceDefinition, version string) func() (*spec.Swagger, error) {
	crd = crd.DeepCopy()
	var (
		once sync.Once
		doc  *spec.Swagger
		err  error
	)
	return func() (*spec.Swagger, error) {
		once.Do(func() {
			doc, err = builder.BuildOpenAPIV2(crd, version, builder.Options{V2: true})
		})
		return doc, err
	}
}
