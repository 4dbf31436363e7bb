package crd

// The OpenAPI v3 description of a custom resource version, built from its
// CRD's schema by apiextensions' own OpenAPI builder, as upstream serves
// it under /openapi/v3/apis/<group>/<version>: the paths of every verb
// (each operation tagged with x-kubernetes-group-version-kind and, for
// writes, the fieldValidation parameter kubectl looks for), the kind's
// schema with apiVersion, kind and metadata added, its list kind, and the
// metadata types they refer to. `kubectl explain` reads the schema;
// kubectl create and apply find the PATCH operation and send
// fieldValidation=Strict.

import (
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	"k8s.io/kube-openapi/pkg/spec3"
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
