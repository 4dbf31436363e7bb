// Package crd serves CustomResourceDefinitions and the custom resources
// they define. A CRD is an object like any other (apiextensions.k8s.io/v1,
// cluster-scoped, stored at /registry/apiextensions.k8s.io/
// customresourcedefinitions/<name>); what makes it special is that, once
// a controller has accepted its names and marked it Established, its
// custom resources become resources of the running stack: entries of the
// stack's registry.Table, added and removed at run time, served by the
// same Store, watch cache and apiserver as the built-in kinds.
//
// # From a CRD to a served resource
//
//   - ResourceFor (resource.go) turns one served version of a CRD into a
//     registry.Resource: names and scope from status.acceptedNames, the
//     etcd prefix /registry/<group>/<plural>, objects as
//     *unstructured.Unstructured stored as JSON at the storage version
//     (resource_codec.go), the write rules every custom resource follows
//     (resource_strategy.go), the scale subresource (resource_scale.go)
//     and printer columns (resource_print.go).
//   - NewVersion (version.go) compiles one version's schema with
//     apiextensions' own packages: the structural schema, pruning of
//     unknown fields and defaulting (schema.go), OpenAPI validation with
//     ratcheting, x-kubernetes-validations CEL rules within a cost budget,
//     transition rules included (schema_validate.go), and the type
//     converter server-side apply needs (version_typeconverter.go).
//   - The schema acts at four points, as upstream's: a request body is
//     pruned and defaulted as it is decoded, its dropped fields being the
//     unknown fields fieldValidation reports (Resource.Coerce); every
//     write is pruned, defaulted and validated again by the strategy
//     (version_strategy.go), whatever produced it (a patch, a status
//     carried over); every read from etcd is pruned and defaulted by the
//     current schema (the codec); and /openapi/v3 and /openapi/v2
//     describe the version from it (openapi.go, Resource.OpenAPIV3/V2).
//   - Every served version is a Resource of its own over the same prefix:
//     a request at any version reads and writes the same etcd keys. With
//     the None conversion strategy only apiVersion differs; with Webhook,
//     a request that would need a conversion gets a Status saying minicp
//     calls no webhooks.
//
// # At run time
//
//   - Serving (resource_serving.go) runs inside the stack. It lists and
//     watches the stored CRDs through the watch cache and keeps the
//     stack's registry.Table in step: a CRD whose Established condition is
//     True has its served versions in the table, storage version first; a
//     change of its spec or accepted names replaces them in one
//     Table.Change; a CRD that leaves etcd takes them out. The table's
//     subscribers do the rest: the watch cache starts (or stops) a cache
//     per resource, discovery and OpenAPI are rebuilt. Only Serving's
//     goroutine touches its record of what each CRD serves.
//   - The conditions Serving waits for are set by the CRD controller
//     (package controllers/crd), a client of the API, as upstream's
//     naming and establishing controllers; the cleanup of a deleted CRD is
//     that controller's too. While a CRD is Terminating, creates of its
//     custom resources are 405 (Resource.CreateGate, an atomic flag
//     Serving sets), and reads, updates and deletes go on.
//   - From the CRD's write to a served resource: the controller's status
//     update, one watch event to Serving, one table swap.
//     BenchmarkCRDCreateToFirstCustomResource (e2e) measures 15-45 ms from
//     creating a CRD to the first custom resource created
//     (docs/BENCHMARKS.md).
//
// # Invariants
//
//   - A Resource built here is never changed: when a CRD changes, the
//     stack replaces its descriptors in one swap of the table.
//   - Custom resources are JSON in etcd, never protobuf, and are served
//     only as JSON and YAML (Resource.TextOnly), as upstream.
//   - metadata.generation is 1 on create and grows with every change
//     outside metadata (and outside status when the status subresource is
//     on); with a status subresource, only it writes status.
package crd
