package openapi

import (
	"reflect"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minicp/apiserver/discovery"
	"minicp/registry"
)

// This file describes the REST paths of the resource table, once, in a
// form independent of the OpenAPI version: a path per URL the REST
// handlers serve, an operation per verb. v3.go and v2.go
// render it. What kubectl reads in it is on the PATCH operations:
// x-kubernetes-group-version-kind and the fieldValidation query parameter.

// Media types of request and response bodies, as upstream lists them.
var (
	responseTypes = []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}
	patchTypes    = []string{"application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json"}
	anyType       = []string{"*/*"}
)

// queryParameters are the query parameters of each action, by name: the
// ones the REST handlers read ("force" is server-side apply's).
var queryParameters = map[string][]string{
	"list":   {"allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "resourceVersion", "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch"},
	"post":   {"dryRun", "fieldManager", "fieldValidation"},
	"put":    {"dryRun", "fieldManager", "fieldValidation"},
	"patch":  {"dryRun", "fieldManager", "fieldValidation", "force"},
	"delete": {"dryRun"},
	// deletecollection: the list's selectors and the deletion's options
	"deletecollection": {"continue", "dryRun", "fieldSelector", "labelSelector", "limit", "resourceVersion", "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds"},
}

// queryParameterInfo gives each query parameter its type and a description.
var queryParameterInfo = map[string]struct{ typ, description string }{
	"pretty":               {"string", "If 'true', then the output is pretty printed."},
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
	"fieldManager":         {"string", "Name of the actor making the change, for managedFields: required for apply (application/apply-patch+yaml), at most 128 printable characters; defaults to the User-Agent's product."},
	"force":                {"boolean", "Apply only: take over the fields other managers own instead of answering 409 Conflict."},
	"fieldValidation":      {"string", "How to treat unknown or duplicate fields in the body: Ignore, Warn or Strict."},
}

// apiParameter is a path or query parameter.
type apiParameter struct {
	name, in, typ, description string
	required                   bool
}

func queryParameter(name string) apiParameter {
	info := queryParameterInfo[name]
	return apiParameter{name: name, in: "query", typ: info.typ, description: info.description}
}

func pathParameter(name, description string) apiParameter {
	return apiParameter{name: name, in: "path", typ: "string", description: description, required: true}
}

// apiOperation is one verb on one path. action is upstream's
// x-kubernetes-action: get, list, post, put, patch or delete.
type apiOperation struct {
	action, id, description, tag string
	gvk                          schema.GroupVersionKind
	query                        []apiParameter
	bodyTypes                    []string // media types of the request body; nil: none
	bodyRef                      string   // component of the request body
	responseRef                  string   // component of 2xx response bodies
	responses                    []string // status codes with a body, besides 401
}

// apiPath is one URL with its operations, by lower-case HTTP method.
type apiPath struct {
	params []apiParameter
	ops    map[string]apiOperation
}

// componentRefs names the components operations refer to.
type componentRefs struct {
	kind, list, deleteOptions, patch, status string
}

// addCommonComponents adds the meta.k8s.io components every
// group-version's operations use, and returns refs with their names.
func addCommonComponents(b *schemaBuilder) componentRefs {
	return componentRefs{
		status:        b.ref(reflect.TypeOf(metav1.Status{})),
		deleteOptions: b.ref(reflect.TypeOf(metav1.DeleteOptions{})),
		patch:         b.ref(reflect.TypeOf(metav1.Patch{})),
	}
}

// addKindComponents adds r's kind and list kind, and returns refs for
// operations on r.
func addKindComponents(b *schemaBuilder, r *registry.Resource, common componentRefs) componentRefs {
	refs := common
	refs.kind = b.addKind(r.New(), r.GroupVersionKind())
	refs.list = b.addKind(r.NewList(), r.GroupVersion.WithKind(r.ListKind))
	return refs
}

// resourcePaths lists the collection, object and subresource paths of r,
// keyed by URL template.
func resourcePaths(r *registry.Resource, refs componentRefs) map[string]apiPath {
	prefix := "/api/" + r.GroupVersion.Version
	if r.GroupVersion.Group != "" {
		prefix = "/apis/" + r.GroupVersion.String()
	}
	pretty := queryParameter("pretty")
	paths := map[string]apiPath{}
	collection, scoped := prefix+"/"+r.Name, ""
	var scope []apiParameter
	if r.Namespaced {
		collection, scoped = prefix+"/namespaces/{namespace}/"+r.Name, "Namespaced"
		scope = []apiParameter{pathParameter("namespace", "object name and auth scope, such as for teams and projects")}
		paths[prefix+"/"+r.Name] = apiPath{params: []apiParameter{pretty}, ops: map[string]apiOperation{
			"get": newOperation(r, "list", "list"+operationKind(r, "", r.Kind+"ForAllNamespaces"), "list or watch objects of kind "+r.Kind, refs),
		}}
	}
	paths[collection] = apiPath{params: append(append([]apiParameter{}, scope...), pretty), ops: map[string]apiOperation{
		"get":  newOperation(r, "list", "list"+operationKind(r, scoped, r.Kind), "list or watch objects of kind "+r.Kind, refs),
		"post": newOperation(r, "post", "create"+operationKind(r, scoped, r.Kind), "create a "+r.Kind, refs),
	}}
	if r.DeleteCollection {
		// Upstream's operation ID puts "Collection" before the scope:
		// deleteCoreV1CollectionNamespacedPod.
		paths[collection].ops["delete"] = newOperation(r, "deletecollection", "delete"+strings.Replace(operationKind(r, scoped, r.Kind), scoped+r.Kind, "Collection"+scoped+r.Kind, 1), "delete collection of "+r.Kind, refs)
	}
	item := append(append([]apiParameter{pathParameter("name", "name of the "+r.Kind)}, scope...), pretty)
	paths[collection+"/{name}"] = apiPath{params: item, ops: map[string]apiOperation{
		"get":    newOperation(r, "get", "read"+operationKind(r, scoped, r.Kind), "read the specified "+r.Kind, refs),
		"put":    newOperation(r, "put", "replace"+operationKind(r, scoped, r.Kind), "replace the specified "+r.Kind, refs),
		"patch":  newOperation(r, "patch", "patch"+operationKind(r, scoped, r.Kind), "partially update the specified "+r.Kind, refs),
		"delete": newOperation(r, "delete", "delete"+operationKind(r, scoped, r.Kind), "delete a "+r.Kind, refs),
	}}
	for _, sub := range r.Subresources {
		kind := r.Kind + strings.ToUpper(sub[:1]) + sub[1:]
		ops := map[string]apiOperation{
			"get":   newOperation(r, "get", "read"+operationKind(r, scoped, kind), "read "+sub+" of the specified "+r.Kind, refs),
			"put":   newOperation(r, "put", "replace"+operationKind(r, scoped, kind), "replace "+sub+" of the specified "+r.Kind, refs),
			"patch": newOperation(r, "patch", "patch"+operationKind(r, scoped, kind), "partially update "+sub+" of the specified "+r.Kind, refs),
		}
		if !slices.Contains(discovery.SubresourceVerbs(sub), "get") { // finalize: PUT only
			delete(ops, "get")
			delete(ops, "patch")
		}
		paths[collection+"/{name}/"+sub] = apiPath{params: item, ops: ops}
	}
	return paths
}

// newOperation fills in what follows from the action: parameters, bodies
// and response codes.
func newOperation(r *registry.Resource, action, id, description string, refs componentRefs) apiOperation {
	op := apiOperation{
		action: action, id: id, description: description, tag: operationTag(r), gvk: r.GroupVersionKind(),
		responseRef: refs.kind, responses: []string{"200"},
	}
	for _, name := range queryParameters[action] {
		op.query = append(op.query, queryParameter(name))
	}
	switch action {
	case "list":
		op.responseRef = refs.list
	case "post", "put":
		op.bodyTypes, op.bodyRef, op.responses = anyType, refs.kind, []string{"200", "201"}
	case "patch":
		op.bodyTypes, op.bodyRef, op.responses = patchTypes, refs.patch, []string{"200", "201"}
	case "delete":
		op.bodyTypes, op.bodyRef, op.responses = anyType, refs.deleteOptions, []string{"200", "202"}
	case "deletecollection":
		// Upstream documents a Status; the body is the list of what was deleted.
		op.bodyTypes, op.bodyRef, op.responseRef = anyType, refs.deleteOptions, refs.status
	}
	return op
}

var responseDescriptions = map[string]string{"200": "OK", "201": "Created", "202": "Accepted", "401": "Unauthorized"}

// operationKind builds the middle of upstream's operation IDs:
// "CoreV1NamespacedPod", "CoordinationV1NamespacedLease".
func operationKind(r *registry.Resource, scoped, kind string) string {
	group := "core"
	if r.GroupVersion.Group != "" {
		group, _, _ = strings.Cut(r.GroupVersion.Group, ".")
	}
	version := r.GroupVersion.Version
	return strings.ToUpper(group[:1]) + group[1:] + strings.ToUpper(version[:1]) + version[1:] + scoped + kind
}

// operationTag is upstream's tag: "core_v1", "coordination_v1".
func operationTag(r *registry.Resource) string {
	group := "core"
	if r.GroupVersion.Group != "" {
		group, _, _ = strings.Cut(r.GroupVersion.Group, ".")
	}
	return group + "_" + r.GroupVersion.Version
}
