package apiserver

// Custom resources have no protobuf form (registry.Resource.TextOnly):
// upstream serves them as JSON and YAML only. A body in protobuf is 415
// UnsupportedMediaType, a strategic merge patch too (it needs Go types),
// and an Accept header is read without its protobuf clauses, so that a
// client asking for protobuf or JSON gets JSON, and one asking for
// protobuf alone gets 406 NotAcceptable. The object's metadata alone
// (as=PartialObjectMetadata, what the metadata client asks for) is the
// exception: it is a built-in type, served in protobuf as upstream serves
// it for custom resources too.

import (
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"minicp/registry"
)

// customResourcePatchTypes are the patches upstream takes for custom resources.
var customResourcePatchTypes = []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.ApplyYAMLPatchType)}

// textOnly checks a request on a TextOnly resource and returns it with
// the protobuf clauses of its Accept header removed. Other resources'
// requests are returned as they are.
func textOnly(req *http.Request, info *requestInfo, res *registry.Resource) (*http.Request, error) {
	if res == nil || !res.TextOnly || info.subresource == "scale" {
		return req, nil
	}
	switch mediaTypeOf(req.Header.Get("Content-Type")) {
	case runtime.ContentTypeProtobuf:
		if req.Method == http.MethodPatch {
			return req, unsupportedMediaType(customResourcePatchTypes)
		}
		return req, unsupportedMediaType([]string{runtime.ContentTypeJSON, runtime.ContentTypeYAML})
	case string(types.StrategicMergePatchType):
		// Strategic merge patch needs the Go types of built-in kinds.
		return req, unsupportedMediaType(customResourcePatchTypes)
	}
	// Media types are case-insensitive: negotiateOutput reads them in
	// lower case, and so does this filter.
	accept := req.Header.Get("Accept")
	if !strings.Contains(strings.ToLower(accept), runtime.ContentTypeProtobuf) {
		return req, nil
	}
	var kept []string
	for _, clause := range strings.Split(accept, ",") {
		if !strings.EqualFold(mediaTypeOf(clause), runtime.ContentTypeProtobuf) || asObjectMetadata(clause) {
			kept = append(kept, clause)
		}
	}
	if len(kept) == 0 {
		return req, notAcceptable()
	}
	req = req.Clone(req.Context())
	req.Header.Set("Accept", strings.Join(kept, ","))
	return req, nil
}

// asObjectMetadata reports whether an Accept clause asks for object
// metadata only (as=PartialObjectMetadata or PartialObjectMetadataList).
func asObjectMetadata(clause string) bool {
	for _, c := range parseAccept(clause) {
		if as := c.params["as"]; as == asPartialObjectMetadata || as == asPartialObjectMetadataList {
			return true
		}
	}
	return false
}
