package apiserver

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minicp/registry"
)

// Discovery is how a client learns, before its first real request, which
// groups, versions and resources the server has, under which names and with
// which verbs. kubectl turns "po" into GET /api/v1/namespaces/x/pods with it.
//
// Two shapes of the same information exist and both are served here:
//
//   - legacy discovery, one document per level: /api (APIVersions), /apis
//     (APIGroupList), /apis/<group> (APIGroup) and /api/v1 or
//     /apis/<group>/<version> (APIResourceList);
//   - aggregated discovery (apidiscovery.k8s.io/v2), everything in two
//     documents, /api and /apis, chosen by the Accept header. kubectl and
//     client-go ask for it first and fall back to the legacy shape when the
//     response's Content-Type is plain application/json.

// resourceVerbs are the verbs of a resource of the table, in upstream's
// (sorted) order, deletecollection where Resource.DeleteCollection.
func resourceVerbs(r *registry.Resource) []string {
	if !collectionDeletable(r) {
		return []string{"create", "delete", "get", "list", "patch", "update", "watch"}
	}
	return []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
}

// subresourceVerbs are the verbs of a subresource: "status" is read and
// written, a namespace's "finalize" only replaced (PUT).
func subresourceVerbs(sub string) []string {
	if sub == "finalize" {
		return []string{"update"}
	}
	return []string{"get", "patch", "update"}
}

// aggregatedDiscoveryV2 is the type of aggregated discovery documents, as
// the g, v and as parameters of their media type name it.
var aggregatedDiscoveryV2 = schema.GroupVersionKind{
	Group: apidiscoveryv2.SchemeGroupVersion.Group, Version: apidiscoveryv2.SchemeGroupVersion.Version,
	Kind: "APIGroupDiscoveryList",
}

const aggregatedDiscoveryContentType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// staticDocument is one precomputed response body with its entity tag
// (a document changes only when the resource table does).
type staticDocument struct {
	body []byte
	etag string
}

// discoveryHandler holds every document, computed once from one state of
// the resource table (liveDiscovery builds one per state).
type discoveryHandler struct {
	coreVersions   []string                  // versions of the core group, for /api
	groupList      staticDocument            // /apis (legacy)
	groups         map[string]staticDocument // /apis/<group>
	resourceLists  map[string]staticDocument // "v1", "coordination.k8s.io/v1"
	aggregatedCore staticDocument            // /api (aggregated)
	aggregatedAPIs staticDocument            // /apis (aggregated)
	versionInfo    staticDocument            // /version
}

// newDiscoveryHandler serves /api, /api/v1, /apis, /apis/<group>,
// /apis/<group>/<version> and /version for resources.
func newDiscoveryHandler(resources []*registry.Resource) http.Handler {
	d := &discoveryHandler{
		groups:        map[string]staticDocument{},
		resourceLists: map[string]staticDocument{},
		versionInfo:   mustDocument(serverVersion()),
	}
	groupList := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
	listType := metav1.TypeMeta{Kind: aggregatedDiscoveryV2.Kind, APIVersion: apidiscoveryv2.SchemeGroupVersion.String()}
	core := apidiscoveryv2.APIGroupDiscoveryList{TypeMeta: listType}
	apis := apidiscoveryv2.APIGroupDiscoveryList{TypeMeta: listType}
	for _, g := range byGroup(resources) {
		agg := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g.name}}
		for _, v := range g.versions {
			d.resourceLists[v.gv.String()] = mustDocument(apiResourceList(v.gv, v.resources))
			agg.Versions = append(agg.Versions, aggregatedVersion(v.gv.Version, v.resources))
		}
		if g.name == "" {
			d.coreVersions = g.versionNames()
			core.Items = append(core.Items, agg)
			continue
		}
		group := apiGroup(g.name, g.versionNames())
		groupList.Groups = append(groupList.Groups, group)
		group.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
		d.groups[g.name] = mustDocument(group)
		apis.Items = append(apis.Items, agg)
	}
	d.addReviewDiscovery(&groupList, &apis) // selfreview.go
	d.groupList = mustDocument(groupList)
	d.aggregatedCore = mustDocument(core)
	d.aggregatedAPIs = mustDocument(apis)
	return d
}

func (d *discoveryHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeDocumentStatus(w, errDocumentMethod)
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) == 1 && parts[0] == "version":
		serveDocument(w, r, "application/json", d.versionInfo)
	case len(parts) == 1 && parts[0] == "api":
		d.serveRoot(w, r, d.aggregatedCore, func() staticDocument {
			return mustDocument(apiVersions(d.coreVersions, r.Host))
		})
	case len(parts) == 1 && parts[0] == "apis":
		d.serveRoot(w, r, d.aggregatedAPIs, func() staticDocument { return d.groupList })
	case len(parts) == 2 && parts[0] == "api":
		d.serveFrom(w, r, d.resourceLists, parts[1])
	case len(parts) == 2 && parts[0] == "apis":
		d.serveFrom(w, r, d.groups, parts[1])
	case len(parts) == 3 && parts[0] == "apis":
		d.serveFrom(w, r, d.resourceLists, parts[1]+"/"+parts[2])
	default:
		writeDocumentStatus(w, errDocumentNotFound)
	}
}

// serveRoot answers /api or /apis in the shape the client prefers.
func (d *discoveryHandler) serveRoot(w http.ResponseWriter, r *http.Request, aggregated staticDocument, legacy func() staticDocument) {
	w.Header().Add("Vary", "Accept")
	switch negotiateDiscovery(r.Header.Get("Accept")) {
	case discoveryAggregated:
		serveDocument(w, r, aggregatedDiscoveryContentType, aggregated)
	case discoveryLegacy:
		serveDocument(w, r, "application/json", legacy())
	default:
		writeDocumentStatus(w, documentStatus(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
			"only the following media types are accepted: application/json, "+aggregatedDiscoveryContentType))
	}
}

func (d *discoveryHandler) serveFrom(w http.ResponseWriter, r *http.Request, docs map[string]staticDocument, key string) {
	doc, ok := docs[key]
	if !ok {
		writeDocumentStatus(w, errDocumentNotFound)
		return
	}
	serveDocument(w, r, "application/json", doc)
}

type discoveryShape int

const (
	discoveryNotAcceptable discoveryShape = iota
	discoveryAggregated
	discoveryLegacy
)

// negotiateDiscovery picks the first media range of accept that minicp can
// serve. client-go sends "<aggregated v2>,application/json"; kubectl before
// 1.30 asks for v2beta1 first, which minicp skips, so it gets legacy.
func negotiateDiscovery(accept string) discoveryShape {
	if strings.TrimSpace(accept) == "" {
		return discoveryLegacy
	}
	for _, clause := range strings.Split(accept, ",") {
		base, params, err := mime.ParseMediaType(strings.TrimSpace(clause))
		if err != nil {
			continue
		}
		switch {
		case base == "application/json" && params["g"] == aggregatedDiscoveryV2.Group &&
			params["v"] == aggregatedDiscoveryV2.Version && params["as"] == aggregatedDiscoveryV2.Kind:
			return discoveryAggregated
		case base == "application/json" && params["g"] == "" && params["as"] == "",
			base == "application/*", base == "*/*":
			return discoveryLegacy
		}
	}
	return discoveryNotAcceptable
}

// serveDocument writes doc with an ETag and answers If-None-Match with 304.
func serveDocument(w http.ResponseWriter, r *http.Request, contentType string, doc staticDocument) {
	w.Header().Set("ETag", doc.etag)
	if match := r.Header.Get("If-None-Match"); match != "" && match == doc.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(doc.body) // the client went away; nothing to do
}

// Errors of the document endpoints, with upstream's codes and messages.
var (
	errDocumentNotFound = documentStatus(http.StatusNotFound, metav1.StatusReasonNotFound,
		"the server could not find the requested resource")
	errDocumentMethod = documentStatus(http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed,
		"the server does not allow this method on the requested resource")
)

func documentStatus(code int32, reason metav1.StatusReason, message string) metav1.Status {
	return metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: code, Reason: reason, Message: message,
	}
}

// writeDocumentStatus writes status as JSON, the only encoding the
// document endpoints speak.
func writeDocumentStatus(w http.ResponseWriter, status metav1.Status) {
	body, err := json.Marshal(status)
	if err != nil {
		http.Error(w, status.Message, int(status.Code))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(status.Code))
	_, _ = w.Write(body) // the client went away; nothing to do
}

// mustDocument encodes v, which is always one of the discovery structs
// above: a failure is a programming error.
func mustDocument(v any) staticDocument {
	body, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("encoding discovery document %T: %v", v, err))
	}
	sum := sha256.Sum256(body)
	return staticDocument{body: body, etag: fmt.Sprintf("%q", fmt.Sprintf("%X", sum[:16]))}
}
