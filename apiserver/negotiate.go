package apiserver

import (
	"fmt"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"minicp/registry"
)

// Values of the `as` media type parameter: kubectl asks for tables, the
// metadata client for object metadata only.
const (
	asTable                     = "Table"
	asPartialObjectMetadata     = "PartialObjectMetadata"
	asPartialObjectMetadataList = "PartialObjectMetadataList"
)

// responseTarget is what a response carries, which decides the forms it
// can take.
type responseTarget int

const (
	targetObject responseTarget = iota // one object
	targetList                         // a list
	targetWatch                        // a stream of watch events, each about one object
)

// output is the negotiated form of a response: a serializer, and whether
// the object is transformed first (into a Table or PartialObjectMetadata).
type output struct {
	info runtime.SerializerInfo
	as   string // "" for the object itself
}

// acceptClause is one media range of an Accept header.
type acceptClause struct {
	mediaType string
	params    map[string]string
	q         float64
}

// parseAccept splits an Accept header into its media ranges, best first
// (by q, then by order). Clauses that do not parse or have q=0 are dropped.
func parseAccept(header string) []acceptClause {
	var clauses []acceptClause
	for _, part := range strings.Split(header, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		mediaType, params, err := mime.ParseMediaType(part)
		if err != nil {
			continue
		}
		q := 1.0
		if s, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(s, 64); err != nil || q <= 0 {
				continue
			}
		}
		clauses = append(clauses, acceptClause{mediaType: mediaType, params: params, q: q})
	}
	sort.SliceStable(clauses, func(i, j int) bool { return clauses[i].q > clauses[j].q })
	return clauses
}

// negotiateOutput picks the response form from the Accept header: the
// first clause, best first, that names a media type the target can take.
// A watch needs a streaming serializer (JSON or protobuf, not YAML); a
// list takes as=PartialObjectMetadataList, an object or a watch
// as=PartialObjectMetadata. No acceptable clause is 406 NotAcceptable; no
// Accept header at all means JSON.
func negotiateOutput(req *http.Request, target responseTarget) (output, error) {
	header := req.Header.Get("Accept")
	if strings.TrimSpace(header) == "" {
		return output{info: mediaTypeInfo(runtime.ContentTypeJSON)}, nil
	}
	for _, c := range parseAccept(header) {
		if c.mediaType == "*/*" || c.mediaType == "application/*" {
			return output{info: mediaTypeInfo(runtime.ContentTypeJSON)}, nil
		}
		info, ok := runtime.SerializerInfoForMediaType(registry.Codecs.SupportedMediaTypes(), c.mediaType)
		if !ok || (target == targetWatch && info.StreamSerializer == nil) {
			continue
		}
		as, ok := c.params["as"]
		if !ok {
			return output{info: info}, nil
		}
		if acceptsTransform(c, as, target) {
			return output{info: info, as: as}, nil
		}
	}
	return output{}, notAcceptable()
}

// acceptsTransform reports whether a clause asking for a transformed
// response (as=...;g=meta.k8s.io;v=v1) can be served. Tables are text
// only, JSON or YAML, as upstream serves them; object metadata also comes
// in protobuf, which is what the metadata client asks for first (its
// informers, the garbage collector's among them, then decode each watch
// event from protobuf rather than JSON).
func acceptsTransform(c acceptClause, as string, target responseTarget) bool {
	if c.params["g"] != metav1.GroupName || c.params["v"] != "v1" {
		return false
	}
	text := c.mediaType == runtime.ContentTypeJSON || c.mediaType == runtime.ContentTypeYAML
	switch as {
	case asTable:
		return text
	case asPartialObjectMetadata:
		return target != targetList
	case asPartialObjectMetadataList:
		return target == targetList
	}
	return false
}

// errorOutput is the serializer for a Status: the negotiated one when the
// Accept header allows one, JSON otherwise. A Status is never transformed.
func errorOutput(req *http.Request) runtime.SerializerInfo {
	if out, err := negotiateOutput(req, targetObject); err == nil {
		return out.info
	}
	if out, err := negotiateOutput(req, targetList); err == nil {
		return out.info
	}
	return mediaTypeInfo(runtime.ContentTypeJSON)
}

// mediaTypeInfo returns the serializer of a media type registry.Codecs
// supports; it panics for an unsupported one, which is a programming error.
func mediaTypeInfo(mediaType string) runtime.SerializerInfo {
	info, ok := runtime.SerializerInfoForMediaType(registry.Codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		panic(fmt.Sprintf("media type %s is not supported by registry.Codecs", mediaType))
	}
	return info
}

// negotiateInput picks the decoder of a request body from its
// Content-Type: JSON when absent, 415 UnsupportedMediaType when unknown.
// The SerializerInfo carries both a Serializer and a StrictSerializer
// (which reports unknown and duplicate fields, for fieldValidation).
func negotiateInput(req *http.Request) (runtime.SerializerInfo, error) {
	contentType := req.Header.Get("Content-Type")
	if contentType == "" {
		contentType = runtime.ContentTypeJSON
	}
	info, ok := runtime.SerializerInfoForMediaType(registry.Codecs.SupportedMediaTypes(), mediaTypeOf(contentType))
	if !ok {
		return runtime.SerializerInfo{}, unsupportedMediaType(supportedMediaTypes())
	}
	return info, nil
}

// mediaTypeOf strips parameters (charset, ...) from a Content-Type.
func mediaTypeOf(contentType string) string {
	if mediaType, _, err := mime.ParseMediaType(contentType); err == nil {
		return mediaType
	}
	return strings.TrimSpace(strings.SplitN(contentType, ";", 2)[0])
}

func supportedMediaTypes() []string {
	var types []string
	for _, info := range registry.Codecs.SupportedMediaTypes() {
		types = append(types, info.MediaType)
	}
	return types
}

// notAcceptable is upstream's 406 for an Accept header nothing matches.
func notAcceptable() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotAcceptable,
		Reason:  metav1.StatusReasonNotAcceptable,
		Message: "only the following media types are accepted: " + strings.Join(supportedMediaTypes(), ", "),
	}}
}

// unsupportedMediaType is upstream's 415 for a body in an unknown format.
func unsupportedMediaType(accepted []string) error {
	return unsupportedMediaTypeWith("the body of the request was in an unknown format - accepted media types include: " + strings.Join(accepted, ", "))
}

// unsupportedMediaTypeWith is upstream's 415 with a message of its own.
func unsupportedMediaTypeWith(message string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusUnsupportedMediaType,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: message,
	}}
}
