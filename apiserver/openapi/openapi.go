package openapi

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minicp/apiserver/discovery"
	"minicp/apiserver/internal/document"
	"minicp/registry"
)

// Handler builds its documents from the resource table on first
// use: they take tens of milliseconds to generate, which a server that
// starts in a fraction of a second (and tests that start many) should not
// pay up front when most never serve them.
//
// The built-in kinds are described from their Go types, once. Resources
// that bring their own description (Resource.OpenAPIV3: custom resources)
// come and go with the table: their documents, and the index, are rebuilt
// on the first request after the table changed (custom.go).
type Handler struct {
	table *registry.Table
	// builtin is the resources described from Go types: those in the
	// table at start without a description of their own.
	builtin []*registry.Resource

	// v3Once builds builtinIndex and builtinDocs; read-only afterwards.
	v3Once       sync.Once
	builtinIndex map[string]openAPIIndexEntry // "api/v1" -> its URL
	builtinDocs  map[string]document.Document // "api/v1", "apis/coordination.k8s.io/v1"

	// v2Once builds builtinV2, the v2 document of the built-in kinds;
	// read-only afterwards.
	v2Once    sync.Once
	builtinV2 object

	// mu guards v3 (the current v3 index and documents), v2 (the current
	// v2 document), built-in and custom together, and gen. It is held
	// only to read or store them, never across a build: TableChanged
	// runs under the table's writer lock, and every change of the table
	// (a CRD's) would otherwise wait for a build in progress, seconds
	// for a v2 document under the race detector.
	mu sync.Mutex
	v3 *openAPIV3Set
	v2 *openAPIV2Set
	// gen counts TableChanged's clearings: a build stores its result
	// only if gen has not moved since it began, so a document built from
	// a table that changed meanwhile is served to its request but never
	// kept.
	gen uint64
	// buildMu serializes builds, so that the requests that find no
	// document wait for one build instead of each making its own. Taken
	// before mu, never while holding it.
	buildMu sync.Mutex
}

// openAPIIndexEntry is one group-version in the /openapi/v3 index.
type openAPIIndexEntry struct {
	ServerRelativeURL string `json:"serverRelativeURL"`
}

// New serves /openapi/v2, /openapi/v3 and /openapi/v3/<gv> for the
// resources of table, following its changes until the caller unsubscribes
// it from table (registry.Table.Unsubscribe).
func New(table *registry.Table) *Handler {
	h := &Handler{table: table}
	for _, r := range table.Subscribe(h) {
		if r.OpenAPIV3 == nil {
			h.builtin = append(h.builtin, r)
		}
	}
	return h
}

// buildV3 generates the document of each built-in group-version.
func (h *Handler) buildV3() {
	h.builtinIndex = map[string]openAPIIndexEntry{}
	h.builtinDocs = map[string]document.Document{}
	for _, g := range discovery.ByGroup(h.builtin) {
		for _, v := range g.Versions {
			path := openAPIPath(v.GroupVersion)
			doc := openAPIDocument(mustJSON(groupVersionDocument(v.GroupVersion, v.Resources)))
			h.builtinDocs[path] = doc
			h.builtinIndex[path] = openAPIIndexEntry{ServerRelativeURL: "/openapi/v3/" + path + "?hash=" + doc.ETag}
		}
	}
}

// buildV2 generates the v2 document of the built-in kinds.
func (h *Handler) buildV2() {
	h.builtinV2 = swaggerDocument(h.builtin)
}

// openAPIPath is the group-version's key in the index: "api/v1" for the
// core group, "apis/<group>/<version>" otherwise.
func openAPIPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.String()
}

// mustJSON encodes doc, built from plain maps, slices and strings.
func mustJSON(doc any) []byte {
	body, err := json.Marshal(doc)
	if err != nil {
		panic(fmt.Sprintf("encoding OpenAPI document: %v", err))
	}
	return body
}

// openAPIDocument pairs body with upstream's entity tag for it: the
// SHA-512 of the body in upper-case hex.
func openAPIDocument(body []byte) document.Document {
	return document.Document{Body: body, ETag: fmt.Sprintf("%X", sha512.Sum512(body))}
}

// ServeHTTP answers /openapi/v2, /openapi/v3 and /openapi/v3/<gv>.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		document.WriteStatus(w, document.ErrMethodNotAllowed)
		return
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case path == "/openapi/v2":
		h.serveV2(w, r)
	case path == "/openapi/v3":
		serveOpenAPI(w, r, h.current().index)
	case strings.HasPrefix(path, "/openapi/v3/"):
		h.serveGroupVersion(w, r, strings.TrimPrefix(path, "/openapi/v3/"))
	default:
		document.WriteStatus(w, document.ErrNotFound)
	}
}

// serveGroupVersion answers one group-version document. A request with an
// outdated hash is redirected to the current one; one with the current
// hash may be cached without asking again.
func (h *Handler) serveGroupVersion(w http.ResponseWriter, r *http.Request, path string) {
	doc, ok := h.current().docs[path]
	if !ok {
		document.WriteStatus(w, document.ErrNotFound)
		return
	}
	w.Header().Add("Vary", "Accept")
	if !acceptsJSON(r.Header.Get("Accept")) {
		document.WriteStatus(w, document.Status(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
			"only the following media types are accepted: application/json"))
		return
	}
	if hash := r.URL.Query().Get("hash"); hash != "" {
		if hash != doc.ETag {
			http.Redirect(w, r, "/openapi/v3/"+path+"?hash="+doc.ETag, http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Cache-Control", "public, immutable")
		w.Header().Set("Expires", time.Now().AddDate(1, 0, 0).UTC().Format(http.TimeFormat))
	}
	serveOpenAPI(w, r, doc)
}

// serveV2 answers /openapi/v2 as protobuf when the client asks for it
// (kubectl does), as JSON otherwise.
func (h *Handler) serveV2(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("Vary", "Accept")
	for _, clause := range strings.Split(r.Header.Get("Accept"), ",") {
		mediaType, _, _ := strings.Cut(strings.TrimSpace(clause), ";")
		if mediaType == openAPIV2Protobuf || mediaType == openAPIV2ProtobufRequested {
			document.Serve(w, r, openAPIV2Protobuf, quoted(h.currentV2().proto))
			return
		}
	}
	if !acceptsJSON(r.Header.Get("Accept")) {
		document.WriteStatus(w, document.Status(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
			"only the following media types are accepted: application/json, "+openAPIV2Protobuf))
		return
	}
	document.Serve(w, r, "application/json", quoted(h.currentV2().json))
}

// serveOpenAPI writes doc as JSON with its entity tag, quoted as HTTP
// wants it, and answers a matching If-None-Match with 304.
func serveOpenAPI(w http.ResponseWriter, r *http.Request, doc document.Document) {
	document.Serve(w, r, "application/json", quoted(doc))
}

// quoted returns doc with its entity tag in quotes, as HTTP headers carry
// it; the index's hash parameter carries it bare.
func quoted(doc document.Document) document.Document {
	return document.Document{Body: doc.Body, ETag: `"` + doc.ETag + `"`}
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
