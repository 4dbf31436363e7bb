package apiserver

import (
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minicp/registry"
)

// This file writes the OpenAPI v3 document of one group-version: a path
// per URL the REST handlers serve, an operation per verb, and the schemas
// of the kinds. What kubectl reads in it (see openapi.go) is on the PATCH
// operations: x-kubernetes-group-version-kind and the fieldValidation
// query parameter.

// Content types of request and response bodies, as upstream lists them.
var (
	responseTypes = []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}
	patchTypes    = []string{"application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json"}
)

// queryParameters are the query parameters of each action, by name.
var queryParameters = map[string][]string{
	"list":   {"allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "resourceVersion", "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch"},
	"post":   {"dryRun", "fieldManager", "fieldValidation"},
	"put":    {"dryRun", "fieldManager", "fieldValidation"},
	"patch":  {"dryRun", "fieldManager", "fieldValidation", "force"},
	"delete": {"dryRun", "gracePeriodSeconds", "propagationPolicy"},
}

// parameterSchemas gives each query parameter its type and a description.
var parameterSchemas = map[string]struct{ typ, description string }{
	"allowWatchBookmarks":  {"boolean", "Ask for BOOKMARK watch events. Servers may ignore it."},
	"continue":             {"string", "The continue token of the previous page of a paginated list."},
	"fieldSelector":        {"string", "Restrict the list by the objects' fields. Defaults to everything."},
	"labelSelector":        {"string", "Restrict the list by the objects' labels. Defaults to everything."},
	"limit":                {"integer", "The most items to return; the response carries a continue token for the rest."},
	"resourceVersion":      {"string", "How fresh the answer must be; see resourceVersionMatch."},
	"resourceVersionMatch": {"string", "How resourceVersion applies to a list: Exact or NotOlderThan."},
	"sendInitialEvents":    {"boolean", "Start a watch with ADDED events for the current objects, then a BOOKMARK."},
	"timeoutSeconds":       {"integer", "Timeout for the list or watch call."},
	"watch":                {"boolean", "Watch for changes instead of listing."},
	"dryRun":               {"string", "When All, validate the request but do not persist it."},
	"fieldManager":         {"string", "Name of the actor making the change, for managedFields."},
	"fieldValidation":      {"string", "How to treat unknown or duplicate fields in the body: Ignore, Warn or Strict."},
	"force":                {"boolean", "Force an apply request, taking over conflicting fields."},
	"gracePeriodSeconds":   {"integer", "Seconds to wait before deleting the object; zero deletes immediately."},
	"propagationPolicy":    {"string", "Whether and how dependents are garbage collected: Orphan, Background or Foreground."},
}

// groupVersionDocument is the OpenAPI v3 document of gv's resources.
func groupVersionDocument(gv schema.GroupVersion, resources []*registry.Resource) object {
	b := newSchemaBuilder()
	common := operationRefs{
		status:        b.ref(reflect.TypeOf(metav1.Status{})),
		deleteOptions: b.ref(reflect.TypeOf(metav1.DeleteOptions{})),
		patch:         b.ref(reflect.TypeOf(metav1.Patch{})),
	}
	paths := object{}
	for _, r := range resources {
		refs := common
		refs.kind = b.addKind(r.New(), r.GroupVersionKind())
		refs.list = b.addKind(r.NewList(), gv.WithKind(r.ListKind))
		addResourcePaths(paths, r, refs)
	}
	return object{
		"openapi":    "3.0.0",
		"info":       object{"title": "Kubernetes", "version": serverVersion().GitVersion},
		"paths":      paths,
		"components": object{"schemas": b.components},
	}
}

// operationRefs names the components an operation's bodies refer to.
type operationRefs struct {
	kind, list, status, deleteOptions, patch string
}

// addResourcePaths adds the collection, object and subresource paths of r.
func addResourcePaths(paths object, r *registry.Resource, refs operationRefs) {
	prefix := "/api/" + r.GroupVersion.Version
	if r.GroupVersion.Group != "" {
		prefix = "/apis/" + r.GroupVersion.String()
	}
	pathParams := []object{}
	collection := prefix + "/" + r.Name
	scoped := ""
	if r.Namespaced {
		collection = prefix + "/namespaces/{namespace}/" + r.Name
		pathParams = append(pathParams, pathParameter("namespace", "object name and auth scope, such as for teams and projects"))
		scoped = "Namespaced"
		paths[prefix+"/"+r.Name] = object{
			"get":        operation(r, "list", "list"+opKind(r, "", r.Kind+"ForAllNamespaces"), "list or watch objects of kind "+r.Kind, refs.list, refs),
			"parameters": []object{queryParameter("pretty")},
		}
	}
	paths[collection] = object{
		"get":        operation(r, "list", "list"+opKind(r, scoped, r.Kind), "list or watch objects of kind "+r.Kind, refs.list, refs),
		"post":       operation(r, "post", "create"+opKind(r, scoped, r.Kind), "create a "+r.Kind, refs.kind, refs),
		"parameters": append(append([]object{}, pathParams...), queryParameter("pretty")),
	}
	itemParams := append([]object{pathParameter("name", "name of the "+r.Kind)}, pathParams...)
	itemParams = append(itemParams, queryParameter("pretty"))
	paths[collection+"/{name}"] = object{
		"get":        operation(r, "get", "read"+opKind(r, scoped, r.Kind), "read the specified "+r.Kind, refs.kind, refs),
		"put":        operation(r, "put", "replace"+opKind(r, scoped, r.Kind), "replace the specified "+r.Kind, refs.kind, refs),
		"patch":      operation(r, "patch", "patch"+opKind(r, scoped, r.Kind), "partially update the specified "+r.Kind, refs.kind, refs),
		"delete":     operation(r, "delete", "delete"+opKind(r, scoped, r.Kind), "delete a "+r.Kind, refs.kind, refs),
		"parameters": itemParams,
	}
	for _, sub := range r.Subresources {
		kind := r.Kind + strings.ToUpper(sub[:1]) + sub[1:]
		paths[collection+"/{name}/"+sub] = object{
			"get":        operation(r, "get", "read"+opKind(r, scoped, kind), "read "+sub+" of the specified "+r.Kind, refs.kind, refs),
			"put":        operation(r, "put", "replace"+opKind(r, scoped, kind), "replace "+sub+" of the specified "+r.Kind, refs.kind, refs),
			"patch":      operation(r, "patch", "patch"+opKind(r, scoped, kind), "partially update "+sub+" of the specified "+r.Kind, refs.kind, refs),
			"parameters": itemParams,
		}
	}
}

// opKind builds the middle of upstream's operation IDs:
// "CoreV1NamespacedPod", "CoordinationV1NamespacedLease".
func opKind(r *registry.Resource, scoped, kind string) string {
	group := "core"
	if r.GroupVersion.Group != "" {
		group, _, _ = strings.Cut(r.GroupVersion.Group, ".")
	}
	return strings.ToUpper(group[:1]) + group[1:] + strings.ToUpper(r.GroupVersion.Version[:1]) + r.GroupVersion.Version[1:] + scoped + kind
}

// operation describes one verb on one path. action is upstream's
// x-kubernetes-action: get, list, post, put, patch or delete.
func operation(r *registry.Resource, action, id, description, responseRef string, refs operationRefs) object {
	tag := "core_" + r.GroupVersion.Version
	if r.GroupVersion.Group != "" {
		group, _, _ := strings.Cut(r.GroupVersion.Group, ".")
		tag = group + "_" + r.GroupVersion.Version
	}
	op := object{
		"tags":                            []string{tag},
		"description":                     description,
		"operationId":                     id,
		"x-kubernetes-action":             action,
		"x-kubernetes-group-version-kind": gvkObject(r.GroupVersionKind()),
	}
	var params []object
	for _, name := range queryParameters[action] {
		params = append(params, queryParameter(name))
	}
	if params != nil {
		op["parameters"] = params
	}
	ok := object{"description": "OK", "content": content(responseTypes, responseRef)}
	responses := object{"200": ok, "401": object{"description": "Unauthorized"}}
	switch action {
	case "post", "put", "patch":
		responses["201"] = object{"description": "Created", "content": content(responseTypes, responseRef)}
	case "delete":
		responses["202"] = object{"description": "Accepted", "content": content(responseTypes, responseRef)}
	}
	op["responses"] = responses
	switch action {
	case "post", "put":
		op["requestBody"] = object{"required": true, "content": content([]string{"*/*"}, refs.kind)}
	case "patch":
		op["requestBody"] = object{"required": true, "content": content(patchTypes, refs.patch)}
	case "delete":
		op["requestBody"] = object{"content": content([]string{"*/*"}, refs.deleteOptions)}
	}
	return op
}

// content maps each media type to a body of component ref.
func content(mediaTypes []string, ref string) object {
	c := object{}
	for _, mt := range mediaTypes {
		c[mt] = object{"schema": object{"$ref": "#/components/schemas/" + ref}}
	}
	return c
}

func pathParameter(name, description string) object {
	return object{"name": name, "in": "path", "required": true, "description": description,
		"schema": object{"type": "string", "uniqueItems": true}}
}

func queryParameter(name string) object {
	if name == "pretty" {
		return object{"name": "pretty", "in": "query", "description": "If 'true', then the output is pretty printed.",
			"schema": object{"type": "string", "uniqueItems": true}}
	}
	p := parameterSchemas[name]
	return object{"name": name, "in": "query", "description": p.description,
		"schema": object{"type": p.typ, "uniqueItems": true}}
}
