package discovery

import (
	"mime"
	"net/http"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minicp/apiserver/internal/document"
	"minicp/registry"
)

// CreateOnly is a resource the server answers without a descriptor in the
// table, such as the review resources: it is created (and answered) only,
// never stored, and is cluster-scoped. Discovery lists it beside the
// table's resources.
type CreateOnly struct {
	Resource     schema.GroupVersionResource
	Kind         string
	SingularName string
}

// resourceVerbs are the verbs of a resource of the table, in upstream's
// (sorted) order, deletecollection where Resource.DeleteCollection.
func resourceVerbs(r *registry.Resource) []string {
	if !r.DeleteCollection {
		return []string{"create", "delete", "get", "list", "patch", "update", "watch"}
	}
	return []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
}

// SubresourceVerbs are the verbs of a subresource: "status" is read and
// written, a namespace's "finalize" only replaced (PUT).
func SubresourceVerbs(sub string) []string {
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

// discoveryHandler holds every document, computed once from one state of
// the resource table (Handler builds one per state).
type discoveryHandler struct {
	coreVersions   []string                     // versions of the core group, for /api
	groupList      document.Document            // /apis (legacy)
	groups         map[string]document.Document // /apis/<group>
	resourceLists  map[string]document.Document // "v1", "coordination.k8s.io/v1"
	aggregatedCore document.Document            // /api (aggregated)
	aggregatedAPIs document.Document            // /apis (aggregated)
	versionInfo    document.Document            // /version
}

// newDiscoveryHandler serves /api, /api/v1, /apis, /apis/<group>,
// /apis/<group>/<version> and /version for resources.
func newDiscoveryHandler(resources []*registry.Resource, extra []CreateOnly) http.Handler {
	d := &discoveryHandler{
		groups:        map[string]document.Document{},
		resourceLists: map[string]document.Document{},
		versionInfo:   document.MustJSON(serverVersion()),
	}
	groupList := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
	listType := metav1.TypeMeta{Kind: aggregatedDiscoveryV2.Kind, APIVersion: apidiscoveryv2.SchemeGroupVersion.String()}
	core := apidiscoveryv2.APIGroupDiscoveryList{TypeMeta: listType}
	apis := apidiscoveryv2.APIGroupDiscoveryList{TypeMeta: listType}
	for _, g := range ByGroup(resources) {
		agg := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g.Name}}
		for _, v := range g.Versions {
			d.resourceLists[v.GroupVersion.String()] = document.MustJSON(apiResourceList(v.GroupVersion, v.Resources))
			agg.Versions = append(agg.Versions, aggregatedVersion(v.GroupVersion.Version, v.Resources))
		}
		if g.Name == "" {
			d.coreVersions = g.versionNames()
			core.Items = append(core.Items, agg)
			continue
		}
		group := apiGroup(g.Name, g.versionNames())
		groupList.Groups = append(groupList.Groups, group)
		group.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
		d.groups[g.Name] = document.MustJSON(group)
		apis.Items = append(apis.Items, agg)
	}
	d.addCreateOnly(extra, &groupList, &apis)
	d.groupList = document.MustJSON(groupList)
	d.aggregatedCore = document.MustJSON(core)
	d.aggregatedAPIs = document.MustJSON(apis)
	return d
}

func (d *discoveryHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		document.WriteStatus(w, document.ErrMethodNotAllowed)
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) == 1 && parts[0] == "version":
		document.Serve(w, r, "application/json", d.versionInfo)
	case len(parts) == 1 && parts[0] == "api":
		d.serveRoot(w, r, d.aggregatedCore, func() document.Document {
			return document.MustJSON(apiVersions(d.coreVersions, r.Host))
		})
	case len(parts) == 1 && parts[0] == "apis":
		d.serveRoot(w, r, d.aggregatedAPIs, func() document.Document { return d.groupList })
	case len(parts) == 2 && parts[0] == "api":
		d.serveFrom(w, r, d.resourceLists, parts[1])
	case len(parts) == 2 && parts[0] == "apis":
		d.serveFrom(w, r, d.groups, parts[1])
	case len(parts) == 3 && parts[0] == "apis":
		d.serveFrom(w, r, d.resourceLists, parts[1]+"/"+parts[2])
	default:
		document.WriteStatus(w, document.ErrNotFound)
	}
}

// serveRoot answers /api or /apis in the shape the client prefers.
func (d *discoveryHandler) serveRoot(w http.ResponseWriter, r *http.Request, aggregated document.Document, legacy func() document.Document) {
	w.Header().Add("Vary", "Accept")
	switch negotiateDiscovery(r.Header.Get("Accept")) {
	case discoveryAggregated:
		document.Serve(w, r, aggregatedDiscoveryContentType, aggregated)
	case discoveryLegacy:
		document.Serve(w, r, "application/json", legacy())
	default:
		document.WriteStatus(w, document.Status(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
			"only the following media types are accepted: application/json, "+aggregatedDiscoveryContentType))
	}
}

func (d *discoveryHandler) serveFrom(w http.ResponseWriter, r *http.Request, docs map[string]document.Document, key string) {
	doc, ok := docs[key]
	if !ok {
		document.WriteStatus(w, document.ErrNotFound)
		return
	}
	document.Serve(w, r, "application/json", doc)
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

// addCreateOnly lists the create-only resources in discovery, in both
// shapes, beside the stored ones.
func (d *discoveryHandler) addCreateOnly(extra []CreateOnly, groupList *metav1.APIGroupList, apis *apidiscoveryv2.APIGroupDiscoveryList) {
	for _, r := range extra {
		gv := r.Resource.GroupVersion()
		list := &metav1.APIResourceList{
			TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: gv.String(),
			APIResources: []metav1.APIResource{{
				Name: r.Resource.Resource, SingularName: r.SingularName, Kind: r.Kind, Verbs: []string{"create"},
			}},
		}
		d.resourceLists[gv.String()] = document.MustJSON(list)
		group := apiGroup(gv.Group, []string{gv.Version})
		groupList.Groups = append(groupList.Groups, group)
		group.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
		d.groups[gv.Group] = document.MustJSON(group)
		kind := metav1.GroupVersionKind(gv.WithKind(r.Kind))
		apis.Items = append(apis.Items, apidiscoveryv2.APIGroupDiscovery{
			ObjectMeta: metav1.ObjectMeta{Name: gv.Group},
			Versions: []apidiscoveryv2.APIVersionDiscovery{{
				Version: gv.Version, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
				Resources: []apidiscoveryv2.APIResourceDiscovery{{
					Resource: r.Resource.Resource, ResponseKind: &kind, Scope: apidiscoveryv2.ScopeCluster,
					SingularResource: r.SingularName, Verbs: []string{"create"},
				}},
			}},
		})
	}
}
