package apiserver

import (
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"minicp/registry"
)

// Kubernetes verbs, as upstream's RequestInfo names them.
const (
	verbGet    = "get"
	verbList   = "list"
	verbWatch  = "watch"
	verbCreate = "create"
	verbUpdate = "update"
	verbPatch  = "patch"
	verbDelete = "delete"
	// verbDeleteCollection is DELETE on a collection (delete_collection.go).
	verbDeleteCollection = "deletecollection"
)

// requestInfo is what a request path and method mean, worked out once per
// request, before any handler runs:
//
//	/api/v1/namespaces/default/pods/nginx/status
//	 ^   ^  ^          ^       ^    ^     ^
//	 |   |  |          |       |    name  subresource
//	 |   |  |          |       resource
//	 |   |  "namespaces" + namespace
//	 |   version (group "" for /api; /apis/<group>/<version> otherwise)
//	 prefix
//
// A path that is not of this shape (/api, /apis/<group>, /healthz, ...) is
// not a resource request; its verb is the lower-case HTTP method.
type requestInfo struct {
	isResource bool
	verb       string
	gv         schema.GroupVersion
	// namespace is the namespace named in the path ("" for cluster-scoped
	// resources and for lists across all namespaces).
	namespace   string
	resource    string
	name        string
	subresource string
	// legacyWatch is set for the deprecated /watch/ path prefix.
	legacyWatch bool
	// extraParts is set when the path has segments past the subresource;
	// no route matches it.
	extraParts bool
}

// parseRequestInfo splits req's path as upstream's RequestInfoFactory does.
func parseRequestInfo(req *http.Request) *requestInfo {
	info := &requestInfo{verb: strings.ToLower(req.Method)}
	parts := splitPath(req.URL.Path)
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		info.gv = schema.GroupVersion{Version: parts[1]}
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		info.gv = schema.GroupVersion{Group: parts[1], Version: parts[2]}
		parts = parts[3:]
	default:
		return info // discovery, health, metrics, openapi, or nothing at all
	}
	info.isResource = true
	if parts[0] == "watch" {
		info.legacyWatch = true
		parts = parts[1:]
	}
	// /namespaces/<ns>/<resource>... addresses a namespaced resource, but
	// /namespaces/<ns> and /namespaces/<ns>/status address the namespace itself.
	if len(parts) >= 3 && parts[0] == "namespaces" && parts[2] != "status" && parts[2] != "finalize" {
		info.namespace = parts[1]
		parts = parts[2:]
	}
	if len(parts) > 0 {
		info.resource = parts[0]
	}
	if len(parts) > 1 {
		info.name = parts[1]
	}
	if len(parts) > 2 {
		info.subresource = parts[2]
	}
	info.extraParts = len(parts) > 3
	info.verb = resourceVerb(req, info)
	return info
}

func splitPath(path string) []string {
	path = strings.Trim(path, "/")
	if path == "" {
		return nil
	}
	return strings.Split(path, "/")
}

// resourceVerb maps an HTTP method on a resource path to a Kubernetes verb.
func resourceVerb(req *http.Request, info *requestInfo) string {
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		if info.legacyWatch || isWatchQuery(req) {
			return verbWatch
		}
		if info.name == "" {
			return verbList
		}
		return verbGet
	case http.MethodPost:
		return verbCreate
	case http.MethodPut:
		return verbUpdate
	case http.MethodPatch:
		return verbPatch
	case http.MethodDelete:
		if info.name == "" {
			return verbDeleteCollection
		}
		return verbDelete
	}
	return strings.ToLower(req.Method)
}

// isWatchQuery reads ?watch= as upstream converts it to a bool: any value
// but "0" and "false" means true.
func isWatchQuery(req *http.Request) bool {
	values, ok := req.URL.Query()["watch"]
	if !ok || len(values) == 0 {
		return false
	}
	v := strings.ToLower(values[0])
	return v != "0" && v != "false"
}

// lookupResource finds the registry resource the path addresses and checks
// that the path's shape fits it: a namespaced resource is addressed inside
// a namespace (or listed across all of them), a cluster-scoped one never
// is, and only known subresources exist.
func (s *Server) lookupResource(info *requestInfo) (*registry.Resource, bool) {
	if info.extraParts || info.resource == "" {
		return nil, false
	}
	res, ok := s.resources.Lookup(info.gv.WithResource(info.resource))
	if !ok {
		return nil, false
	}
	if !res.Namespaced && info.namespace != "" {
		return nil, false
	}
	if res.Namespaced && info.namespace == "" && info.name != "" {
		return nil, false
	}
	if info.subresource != "" && !res.HasSubresource(info.subresource) {
		return nil, false
	}
	return res, true
}

func hasString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// metricVerb is the verb label of apiserver_request_total, as upstream
// reports it: upper case, GET split into GET, LIST and WATCH, and a PATCH
// with an apply body reported as APPLY.
func (info *requestInfo) metricVerb(req *http.Request) string {
	if !info.isResource {
		return strings.ToUpper(req.Method)
	}
	switch info.verb {
	case verbGet:
		return "GET"
	case verbList:
		return "LIST"
	case verbWatch:
		return "WATCH"
	case verbPatch:
		if mediaTypeOf(req.Header.Get("Content-Type")) == string(types.ApplyPatchType) {
			return "APPLY"
		}
	}
	return strings.ToUpper(req.Method)
}

// metricScope is the scope label: "resource" for one named object or a
// create, "namespace" for a collection in one namespace, "cluster" for a
// collection across the cluster, "" for requests that are not about
// resources.
func (info *requestInfo) metricScope() string {
	switch {
	case !info.isResource:
		return ""
	case info.name != "" || info.verb == verbCreate:
		return "resource"
	case info.namespace != "":
		return "namespace"
	}
	return "cluster"
}

// isLongRunning reports whether a request is exempt from the in-flight
// limits as long-running: a watch holds its slot for minutes, a profile
// for as long as it was asked to run.
func isLongRunning(info *requestInfo, path string) bool {
	return info.verb == verbWatch || isUnder(path, profilingPath)
}

// isMutating reports whether a request counts against the write limit:
// every verb but get, list and watch (and HEAD), as upstream.
func isMutating(info *requestInfo) bool {
	switch info.verb {
	case verbGet, verbList, verbWatch, "head":
		return false
	}
	return true
}
