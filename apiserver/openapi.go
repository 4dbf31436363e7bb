package apiserver

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minicp/registry"
)

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
// The older, single-document /openapi/v2 is not served: kubectl uses it
// only when v3 is missing.

// openAPIHandler holds the index and every group-version document,
// computed once from the resource table.
type openAPIHandler struct {
	index staticDocument            // /openapi/v3
	docs  map[string]staticDocument // "api/v1", "apis/coordination.k8s.io/v1"
}

// newOpenAPIHandler serves /openapi/v2, /openapi/v3 and /openapi/v3/<gv>.
func newOpenAPIHandler(resources []*registry.Resource) http.Handler {
	h := &openAPIHandler{docs: map[string]staticDocument{}}
	type entry struct {
		ServerRelativeURL string `json:"serverRelativeURL"`
	}
	index := map[string]entry{}
	for _, g := range byGroup(resources) {
		for _, v := range g.versions {
			path := openAPIPath(v.gv)
			doc := mustOpenAPIDocument(groupVersionDocument(v.gv, v.resources))
			h.docs[path] = doc
			index[path] = entry{ServerRelativeURL: "/openapi/v3/" + path + "?hash=" + doc.etag}
		}
	}
	h.index = mustOpenAPIDocument(map[string]any{"paths": index})
	return h
}

// openAPIPath is the group-version's key in the index: "api/v1" for the
// core group, "apis/<group>/<version>" otherwise.
func openAPIPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.String()
}

// mustOpenAPIDocument encodes doc, built from plain maps and slices, with
// upstream's entity tag: the SHA-512 of the body in upper-case hex.
func mustOpenAPIDocument(doc any) staticDocument {
	body, err := json.Marshal(doc)
	if err != nil {
		panic(fmt.Sprintf("encoding OpenAPI document: %v", err))
	}
	return staticDocument{body: body, etag: fmt.Sprintf("%X", sha512.Sum512(body))}
}

func (h *openAPIHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeDocumentStatus(w, apierrors.NewMethodNotSupported(schema.GroupResource{}, r.Method))
		return
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case path == "/openapi/v3":
		serveOpenAPI(w, r, h.index)
	case strings.HasPrefix(path, "/openapi/v3/"):
		h.serveGroupVersion(w, r, strings.TrimPrefix(path, "/openapi/v3/"))
	default:
		writeDocumentStatus(w, apierrors.NewNotFound(schema.GroupResource{}, ""))
	}
}

// serveGroupVersion answers one group-version document. A request with an
// outdated hash is redirected to the current one; one with the current
// hash may be cached without asking again.
func (h *openAPIHandler) serveGroupVersion(w http.ResponseWriter, r *http.Request, path string) {
	doc, ok := h.docs[path]
	if !ok {
		writeDocumentStatus(w, apierrors.NewNotFound(schema.GroupResource{}, ""))
		return
	}
	w.Header().Add("Vary", "Accept")
	if !acceptsJSON(r.Header.Get("Accept")) {
		writeDocumentStatus(w, apierrors.NewGenericServerResponse(http.StatusNotAcceptable, "get", schema.GroupResource{}, "",
			"only application/json is supported", 0, false))
		return
	}
	if hash := r.URL.Query().Get("hash"); hash != "" {
		if hash != doc.etag {
			http.Redirect(w, r, "/openapi/v3/"+path+"?hash="+doc.etag, http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Cache-Control", "public, immutable")
		w.Header().Set("Expires", time.Now().AddDate(1, 0, 0).UTC().Format(http.TimeFormat))
	}
	serveOpenAPI(w, r, doc)
}

// serveOpenAPI writes doc as JSON with its entity tag, quoted as HTTP
// wants it, and answers a matching If-None-Match with 304.
func serveOpenAPI(w http.ResponseWriter, r *http.Request, doc staticDocument) {
	serveDocument(w, r, "application/json", staticDocument{body: doc.body, etag: `"` + doc.etag + `"`})
}

// acceptsJSON reports whether accept admits application/json.
func acceptsJSON(accept string) bool {
	if strings.TrimSpace(accept) == "" {
		return true
	}
	for _, clause := range strings.Split(accept, ",") {
		base, _, err := mime.ParseMediaType(strings.TrimSpace(clause))
		if err == nil && (base == "application/json" || base == "application/*" || base == "*/*") {
			return true
		}
	}
	return false
}
