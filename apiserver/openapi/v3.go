package openapi

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minicp/internal/kubeversion"
	"minicp/registry"
)

// OpenAPI v3 rendering of the paths in docs.go: one document per
// group-version, schemas under components.

// groupVersionDocument is the OpenAPI v3 document of gv's resources.
func groupVersionDocument(gv schema.GroupVersion, resources []*registry.Resource) object {
	b := newSchemaBuilder(false)
	common := addCommonComponents(b)
	paths := object{}
	for _, r := range resources {
		for url, p := range resourcePaths(r, addKindComponents(b, r, common)) {
			paths[url] = pathItemV3(p, b.refPrefix)
		}
	}
	return object{
		"openapi":    "3.0.0",
		"info":       object{"title": "Kubernetes", "version": kubeversion.Get().GitVersion},
		"paths":      paths,
		"components": object{"schemas": b.components},
	}
}

func pathItemV3(p apiPath, refPrefix string) object {
	item := object{"parameters": parametersV3(p.params)}
	for method, op := range p.ops {
		item[method] = operationV3(op, refPrefix)
	}
	return item
}

func operationV3(op apiOperation, refPrefix string) object {
	o := object{
		"tags":                            []string{op.tag},
		"description":                     op.description,
		"operationId":                     op.id,
		"x-kubernetes-action":             op.action,
		"x-kubernetes-group-version-kind": gvkObject(op.gvk),
	}
	if len(op.query) > 0 {
		o["parameters"] = parametersV3(op.query)
	}
	if op.bodyTypes != nil {
		o["requestBody"] = object{"required": op.action != "delete" && op.action != "deletecollection", "content": contentV3(op.bodyTypes, refPrefix+op.bodyRef)}
	}
	responses := object{"401": object{"description": responseDescriptions["401"]}}
	for _, code := range op.responses {
		responses[code] = object{"description": responseDescriptions[code], "content": contentV3(responseTypes, refPrefix+op.responseRef)}
	}
	o["responses"] = responses
	return o
}

// contentV3 maps each media type to a body of the schema at ref.
func contentV3(mediaTypes []string, ref string) object {
	c := object{}
	for _, mt := range mediaTypes {
		c[mt] = object{"schema": object{"$ref": ref}}
	}
	return c
}

func parametersV3(params []apiParameter) []object {
	out := make([]object, 0, len(params))
	for _, p := range params {
		o := object{"name": p.name, "in": p.in, "description": p.description,
			"schema": object{"type": p.typ, "uniqueItems": true}}
		if p.required {
			o["required"] = true
		}
		out = append(out, o)
	}
	return out
}
