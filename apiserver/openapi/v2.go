package openapi

import (
	"encoding/json"
	"fmt"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"

	"minicp/apiserver/internal/document"
	"minicp/internal/kubeversion"
	"minicp/registry"
)

// OpenAPI v2 (Swagger 2.0) rendering of the paths in docs.go: one
// document for the whole API, schemas under definitions. kubectl 1.27 and
// 1.28 still read it for apply and explain (later versions use v3), and
// they ask for it as protobuf: gnostic's openapi_v2.Document message.

// Media types of /openapi/v2 as protobuf. Clients ask for the "@" form,
// which Go's mime parser (and so client-go) cannot read in a
// Content-Type; the answer is labelled with the dotted form, as upstream's.
const (
	openAPIV2Protobuf          = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	openAPIV2ProtobufRequested = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
)

// encodeSwagger returns the v2 document doc as JSON and as protobuf.
func encodeSwagger(doc object) (jsonDoc, protoDoc document.Document, err error) {
	body, err := json.Marshal(doc)
	if err != nil {
		return jsonDoc, protoDoc, fmt.Errorf("encoding OpenAPI v2: %w", err)
	}
	parsed, err := openapiv2.ParseDocument(body)
	if err != nil {
		return jsonDoc, protoDoc, fmt.Errorf("OpenAPI v2 document is not valid Swagger 2.0: %w", err)
	}
	pb, err := proto.Marshal(parsed)
	if err != nil {
		return jsonDoc, protoDoc, fmt.Errorf("encoding OpenAPI v2 as protobuf: %w", err)
	}
	return openAPIDocument(body), openAPIDocument(pb), nil
}

// swaggerDocument is the OpenAPI v2 document of resources.
func swaggerDocument(resources []*registry.Resource) object {
	b := newSchemaBuilder(true)
	common := addCommonComponents(b)
	paths := object{}
	for _, r := range resources {
		for url, p := range resourcePaths(r, addKindComponents(b, r, common)) {
			paths[url] = pathItemV2(p, b.refPrefix)
		}
	}
	return object{
		"swagger":     "2.0",
		"info":        object{"title": "Kubernetes", "version": kubeversion.Get().GitVersion},
		"paths":       paths,
		"definitions": b.components,
	}
}

func pathItemV2(p apiPath, refPrefix string) object {
	item := object{"parameters": parametersV2(p.params)}
	for method, op := range p.ops {
		item[method] = operationV2(op, refPrefix)
	}
	return item
}

func operationV2(op apiOperation, refPrefix string) object {
	consumes := anyType
	params := []object{}
	if op.bodyTypes != nil {
		consumes = op.bodyTypes
		body := object{"name": "body", "in": "body", "schema": object{"$ref": refPrefix + op.bodyRef}}
		if op.action != "delete" && op.action != "deletecollection" {
			body["required"] = true
		}
		params = append(params, body)
	}
	responses := object{"401": object{"description": responseDescriptions["401"]}}
	for _, code := range op.responses {
		responses[code] = object{"description": responseDescriptions[code], "schema": object{"$ref": refPrefix + op.responseRef}}
	}
	return object{
		"tags":                            []string{op.tag},
		"description":                     op.description,
		"operationId":                     op.id,
		"consumes":                        consumes,
		"produces":                        responseTypes,
		"schemes":                         []string{"https"},
		"parameters":                      append(params, parametersV2(op.query)...),
		"responses":                       responses,
		"x-kubernetes-action":             op.action,
		"x-kubernetes-group-version-kind": gvkObject(op.gvk),
	}
}

func parametersV2(params []apiParameter) []object {
	out := make([]object, 0, len(params))
	for _, p := range params {
		o := object{"name": p.name, "in": p.in, "description": p.description, "type": p.typ, "uniqueItems": true}
		if p.required {
			o["required"] = true
		}
		out = append(out, o)
	}
	return out
}
