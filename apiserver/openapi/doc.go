// Package openapi serves the OpenAPI documents of the resource table.
//
// OpenAPI is the machine-readable description of the API. minicp serves
// the v3 form, which is split by group-version:
//
//	GET /openapi/v3                      -> {"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=..."}, ...}}
//	GET /openapi/v3/api/v1?hash=...      -> the document of core/v1
//
// The hash is the document's entity tag: a client may cache a URL with a
// hash forever, and the index changes the hash when the document changes.
//
// kubectl needs it for create and apply. Before sending an object it reads
// the document of the object's group-version and looks for the PATCH
// operation of the object's kind with a "fieldValidation" query parameter;
// finding it, it sends fieldValidation=Strict and leaves rejecting unknown
// or duplicate fields to the server. Without any OpenAPI it refuses to
// create anything unless given --validate=false. kubectl explain reads the
// schemas, and kubectl apply the patch hints in them.
//
// The older, single-document /openapi/v2 is served too (v2.go):
// kubectl 1.27 and 1.28 need it for apply and explain.
//
// Documents are built on the first request that needs them, not at start,
// and rebuilt after the table changes (Handler). Builds are serialized by
// a lock of their own; the handler's lock is held only to read or store a
// finished document, never across a build, because table changes arrive
// under the table's writer lock.
package openapi
