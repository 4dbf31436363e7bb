package apiserver

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/yaml"

	"minicp/registry"
)

// protobufPrefix starts every Kubernetes protobuf message: "k8s\x00",
// followed by a runtime.Unknown envelope that names apiVersion and kind.
var protobufPrefix = []byte("k8s\x00")

// readBody reads a request body of at most limit bytes; a larger one is
// 413 RequestEntityTooLarge, as upstream answers.
func readBody(req *http.Request, limit int64) ([]byte, error) {
	tooLarge := apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))
	if req.ContentLength > limit {
		return nil, tooLarge
	}
	if req.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, limit+1))
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("reading the request body: %v", err))
	}
	if int64(len(body)) > limit {
		return nil, tooLarge
	}
	return body, nil
}

// decodeObject decodes a create or update body into a new object of res.
//
// The body's media type comes from Content-Type (JSON, YAML or protobuf).
// apiVersion and kind, when present, must be res's. Unknown and duplicate
// fields are handled as fieldValidation asks: Strict rejects them with 400,
// Warn (the default) accepts the object and returns one warning per field,
// Ignore accepts silently.
func decodeObject(req *http.Request, body []byte, res *registry.Resource, validation string) (runtime.Object, []string, error) {
	info, err := negotiateInput(req)
	if err != nil {
		return nil, nil, err
	}
	if err := checkTypeMeta(body, info.MediaType, res); err != nil {
		return nil, nil, err
	}
	decoding := info.StrictSerializer
	if validation == metav1.FieldValidationIgnore || decoding == nil {
		decoding = info.Serializer
	}
	decoder := registry.Codecs.DecoderToVersion(decoding, res.GroupVersion)
	defaultGVK := res.GroupVersionKind()
	obj, gvk, err := decoder.Decode(body, &defaultGVK, res.New())
	// A strict decoder returns the object along with the unknown and
	// duplicate fields it found.
	var strictErrs []error
	if err != nil {
		strictErr, isStrict := runtime.AsStrictDecodingError(err)
		if !isStrict || obj == nil {
			return nil, nil, decodeError(err, res, gvk, body)
		}
		strictErrs = strictErr.Errors()
	}
	unknown, err := coerceDecoded(res, obj, validation)
	if err != nil {
		return nil, nil, decodeError(err, res, gvk, body)
	}
	strictErrs = append(strictErrs, unknown...)
	// Only Strict turns unknown and duplicate fields into an error.
	if len(strictErrs) > 0 && validation == metav1.FieldValidationStrict {
		return nil, nil, decodeError(runtime.NewStrictDecodingError(strictErrs), res, gvk, body)
	}
	return obj, fieldWarnings(strictErrs), nil
}

// coerceDecoded shapes a decoded object by its resource's schema, when
// the resource has one (Resource.Coerce), and returns the fields it
// dropped as the errors a strict decoder reports for unknown fields.
func coerceDecoded(res *registry.Resource, obj runtime.Object, validation string) ([]error, error) {
	if res.Coerce == nil {
		return nil, nil
	}
	paths, err := res.Coerce(obj, validation != metav1.FieldValidationIgnore)
	if err != nil {
		return nil, err
	}
	unknown := make([]error, 0, len(paths))
	for _, p := range paths {
		unknown = append(unknown, fmt.Errorf("unknown field %q", p))
	}
	return unknown, nil
}

// fieldWarnings are the warnings fieldValidation=Warn returns: one per
// unknown or duplicate field.
func fieldWarnings(errs []error) []string {
	var warnings []string
	for _, e := range errs {
		warnings = append(warnings, e.Error())
	}
	return warnings
}

// decodeError is upstream's 400 for a body that does not decode: it names
// the kind found (or a summary of the body when none was found) and the
// kind expected.
func decodeError(err error, res *registry.Resource, gvk *schema.GroupVersionKind, body []byte) error {
	if gvk != nil && gvk.Kind != "" {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, res.Kind, err))
	}
	return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", res.Kind, err, summarize(body, 30)))
}

// summarize shows the start of a body in an error message: as text when
// it looks like JSON, in hex otherwise.
func summarize(body []byte, max int) string {
	switch {
	case len(body) == 0:
		return "<empty>"
	case body[0] == '{':
		if len(body) > max {
			return string(body[:max]) + " ..."
		}
		return string(body)
	case len(body) > max:
		return hex.EncodeToString(body[:max]) + " ..."
	}
	return hex.EncodeToString(body)
}

// checkTypeMeta reads apiVersion and kind from the body before decoding
// it, so that an object sent to the wrong URL is named as such. A body
// whose type cannot be read is left for the decoder to report.
func checkTypeMeta(body []byte, mediaType string, res *registry.Resource) error {
	gvk, ok := peekTypeMeta(body, mediaType)
	if !ok {
		return nil
	}
	if gvk.Version != "" && gvk.GroupVersion() != res.GroupVersion {
		return apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", gvk.GroupVersion(), res.GroupVersion))
	}
	if gvk.Kind != "" && gvk.Kind != res.Kind {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: the URL names %s, whose kind is %s; send a %s to the URL of its own resource",
			gvk.Kind, gvk.Version, res.Kind, res.Name, res.Kind, gvk.Kind))
	}
	return nil
}

// peekTypeMeta returns the apiVersion and kind a body declares.
func peekTypeMeta(body []byte, mediaType string) (schema.GroupVersionKind, bool) {
	switch mediaType {
	case runtime.ContentTypeProtobuf:
		if !bytes.HasPrefix(body, protobufPrefix) {
			return schema.GroupVersionKind{}, false
		}
		var envelope runtime.Unknown
		if err := envelope.Unmarshal(body[len(protobufPrefix):]); err != nil {
			return schema.GroupVersionKind{}, false
		}
		return schema.FromAPIVersionAndKind(envelope.APIVersion, envelope.Kind), true
	case runtime.ContentTypeYAML:
		js, err := yaml.ToJSON(body)
		if err != nil {
			return schema.GroupVersionKind{}, false
		}
		body = js
	}
	gvk, err := json.DefaultMetaFactory.Interpret(body)
	if err != nil {
		return schema.GroupVersionKind{}, false
	}
	return *gvk, true
}

// ensureNamespace makes the object's namespace agree with the URL's, as
// upstream does: a namespaced object without one takes the URL's, a
// different one is 400, and a cluster-scoped object has none.
func ensureNamespace(obj runtime.Object, urlNamespace string, res *registry.Resource) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	switch {
	case !res.Namespaced:
		m.SetNamespace("")
	case m.GetNamespace() == "":
		m.SetNamespace(urlNamespace)
	case m.GetNamespace() != urlNamespace:
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// checkName rejects an update or patch whose object names another object
// than the URL does.
func checkName(obj runtime.Object, urlName string) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if m.GetName() != urlName {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), urlName))
	}
	return nil
}
