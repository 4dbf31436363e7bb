package openapi

import (
	"encoding/json"
	"log/slog"
	"maps"

	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"minicp/apiserver/internal/document"
	"minicp/internal/kubeversion"
	"minicp/registry"
)

// The OpenAPI v3 documents of resources that describe themselves
// (Resource.OpenAPIV3: custom resources, from their CRD's schema). Every
// resource of a group-version brings a document of its own paths and
// schemas; the group-version's document is their union, as upstream
// merges the documents of the CRDs of one group-version. The metadata
// schemas every one of them carries are the same, so which copy wins
// does not matter.

// openAPIV3Set is one consistent state of /openapi/v3: the index and the
// document of every group-version it lists. Read-only once built.
type openAPIV3Set struct {
	index document.Document
	docs  map[string]document.Document
}

var _ registry.TableSubscriber = (*Handler)(nil)

// TableChanged drops the current documents when a resource that
// describes itself came or went; the next request rebuilds them.
func (h *Handler) TableChanged(added, removed []*registry.Resource) {
	for _, r := range append(added, removed...) {
		if describesItself(r) {
			h.mu.Lock()
			h.v3, h.v2 = nil, nil
			h.gen++
			h.mu.Unlock()
			return
		}
	}
}

// describesItself reports whether r brings its own OpenAPI documents.
func describesItself(r *registry.Resource) bool {
	return r.OpenAPIV3 != nil || r.OpenAPIV2 != nil
}

// current returns the documents of the table as it is now.
func (h *Handler) current() *openAPIV3Set {
	h.v3Once.Do(h.buildV3)
	return latest(h, &h.v3, h.buildV3Set)
}

// latest returns *doc, one of h's documents, built first if the table
// changed since it was (see mu, gen and buildMu).
func latest[T any](h *Handler, doc **T, build func() *T) *T {
	h.mu.Lock()
	built := *doc
	h.mu.Unlock()
	if built != nil {
		return built
	}
	h.buildMu.Lock()
	defer h.buildMu.Unlock()
	h.mu.Lock()
	built, gen := *doc, h.gen
	h.mu.Unlock()
	if built != nil { // built while this request waited for buildMu
		return built
	}
	built = build()
	h.mu.Lock()
	if h.gen == gen {
		*doc = built
	}
	h.mu.Unlock()
	return built
}

// buildV3Set joins the built-in documents and those of the resources in
// the table that describe themselves, and indexes them all.
func (h *Handler) buildV3Set() *openAPIV3Set {
	set := &openAPIV3Set{docs: maps.Clone(h.builtinDocs)}
	index := maps.Clone(h.builtinIndex)
	byPath := map[string]*spec3.OpenAPI{}
	var order []string
	for _, r := range h.table.All() {
		if r.OpenAPIV3 == nil {
			continue
		}
		doc, err := r.OpenAPIV3()
		if err != nil {
			// The CRD passed validation, so this is a bug: serve the rest.
			slog.Warn("openapi: a resource's document could not be built", "resource", r.GroupVersionResource(), "err", err)
			continue
		}
		path := openAPIPath(r.GroupVersion)
		if byPath[path] == nil {
			byPath[path] = newGroupVersionV3()
			order = append(order, path)
		}
		mergeOpenAPIV3(byPath[path], doc)
	}
	for _, path := range order {
		body, err := json.Marshal(byPath[path])
		if err != nil {
			slog.Warn("openapi: a group-version's document could not be encoded", "path", path, "err", err)
			continue
		}
		doc := openAPIDocument(body)
		set.docs[path] = doc
		index[path] = openAPIIndexEntry{ServerRelativeURL: "/openapi/v3/" + path + "?hash=" + doc.ETag}
	}
	set.index = openAPIDocument(mustJSON(map[string]any{"paths": index}))
	return set
}

// newGroupVersionV3 is an empty group-version document, titled as the
// built-in ones.
func newGroupVersionV3() *spec3.OpenAPI {
	return &spec3.OpenAPI{
		Version:    "3.0.0",
		Info:       &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: kubeversion.Get().GitVersion}},
		Paths:      &spec3.Paths{Paths: map[string]*spec3.Path{}},
		Components: &spec3.Components{Schemas: map[string]*spec.Schema{}},
	}
}

// mergeOpenAPIV3 adds src's paths and schemas to dst. The documents it
// is given are shared: it copies their entries, never changes them.
func mergeOpenAPIV3(dst, src *spec3.OpenAPI) {
	if src.Paths != nil {
		maps.Copy(dst.Paths.Paths, src.Paths.Paths)
	}
	if src.Components != nil {
		maps.Copy(dst.Components.Schemas, src.Components.Schemas)
	}
}

// openAPIV2Set is one state of /openapi/v2 in both encodings. Read-only
// once built.
type openAPIV2Set struct {
	json, proto document.Document
}

// currentV2 returns the v2 document of the table as it is now.
func (h *Handler) currentV2() *openAPIV2Set {
	h.v2Once.Do(h.buildV2)
	return latest(h, &h.v2, h.buildV2Set)
}

// buildV2Set adds the paths and definitions of the resources that
// describe themselves to the built-in v2 document, and encodes it.
func (h *Handler) buildV2Set() *openAPIV2Set {
	doc := maps.Clone(h.builtinV2)
	paths := maps.Clone(doc["paths"].(object))
	definitions := maps.Clone(doc["definitions"].(object))
	doc["paths"], doc["definitions"] = paths, definitions
	for _, r := range h.table.All() {
		if r.OpenAPIV2 == nil {
			continue
		}
		if err := mergeSwagger(paths, definitions, r.OpenAPIV2); err != nil {
			slog.Warn("openapi: a resource's v2 document could not be built", "resource", r.GroupVersionResource(), "err", err)
		}
	}
	jsonDoc, protoDoc, err := encodeSwagger(doc)
	if err != nil {
		// Only a custom resource's document can break it: serve the
		// built-in kinds alone rather than nothing.
		slog.Warn("openapi: the v2 document could not be encoded", "err", err)
		if jsonDoc, protoDoc, err = encodeSwagger(h.builtinV2); err != nil {
			panic(err) // the built-in document derives from compiled-in types
		}
	}
	return &openAPIV2Set{json: jsonDoc, proto: protoDoc}
}

// mergeSwagger adds the paths and definitions of build's document to
// paths and definitions, as the plain JSON values the built-in document
// is made of.
func mergeSwagger(paths, definitions object, build func() (*spec.Swagger, error)) error {
	sw, err := build()
	if err != nil {
		return err
	}
	body, err := json.Marshal(sw)
	if err != nil {
		return err
	}
	var parts struct {
		Paths       object `json:"paths"`
		Definitions object `json:"definitions"`
	}
	if err := json.Unmarshal(body, &parts); err != nil {
		return err
	}
	maps.Copy(paths, parts.Paths)
	// The metadata types every custom resource refers to are already
	// there, described from the Go types as for every built-in kind.
	for name, def := range parts.Definitions {
		if _, ok := definitions[name]; !ok {
			definitions[name] = def
		}
	}
	return nil
}
