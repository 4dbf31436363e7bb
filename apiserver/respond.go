package apiserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"minicp/apiserver/filters"
	"minicp/registry"
	"minicp/reqtrace"
)

// statusGroupVersion is where metav1.Status is encoded: "apiVersion": "v1".
var statusGroupVersion = schema.GroupVersion{Version: "v1"}

// writeObject encodes obj in the negotiated form and writes it with code.
// The whole body is encoded before anything is written, so an encoding
// failure can still be answered with a Status.
func writeObject(w http.ResponseWriter, req *http.Request, res *registry.Resource, out output, code int, obj runtime.Object) {
	endEncoding := reqtrace.From(req.Context()).Begin(reqtrace.Encoding)
	obj, gv, err := transformObject(req, obj, res, out.as)
	var buf bytes.Buffer
	if err == nil {
		if encErr := encoderFor(out.info.Serializer, gv, obj).Encode(obj, &buf); encErr != nil {
			err = apierrors.NewInternalError(fmt.Errorf("encoding the response: %w", encErr))
		}
	}
	endEncoding()
	if err != nil {
		writeError(w, req, err)
		return
	}
	writeRaw(w, out.info.MediaType, code, buf.Bytes())
}

// encoderFor returns the encoder of obj in gv: the scheme's, which
// converts typed objects to gv; for Unstructured objects (custom
// resources), which carry their own apiVersion and kind and are not in the
// scheme, the serializer itself.
func encoderFor(serializer runtime.Encoder, gv schema.GroupVersion, obj runtime.Object) runtime.Encoder {
	if _, ok := obj.(runtime.Unstructured); ok {
		return serializer
	}
	return registry.Codecs.EncoderForVersion(serializer, gv)
}

// writeRaw writes an already encoded body.
func writeRaw(w http.ResponseWriter, contentType string, code int, body []byte) {
	writeHeader(w, contentType, code)
	// A failed write means the client went away; there is no one to tell.
	_, _ = w.Write(body)
}

// writeHeader sends the status line and the headers every encoded answer
// carries.
func writeHeader(w http.ResponseWriter, contentType string, code int) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(code)
}

// transformObject turns obj into what the client asked for with `as` and
// returns it with the group version to encode it in. A Status is never
// transformed.
func transformObject(req *http.Request, obj runtime.Object, res *registry.Resource, as string) (runtime.Object, schema.GroupVersion, error) {
	if _, isStatus := obj.(*metav1.Status); isStatus || as == "" {
		return obj, res.GroupVersion, nil
	}
	switch as {
	case asTable:
		opts, err := tableOptions(req)
		if err != nil {
			return nil, schema.GroupVersion{}, err
		}
		table, err := toTable(obj, res, opts)
		if err != nil {
			return nil, schema.GroupVersion{}, err
		}
		return table, metav1.SchemeGroupVersion, nil
	case asPartialObjectMetadata, asPartialObjectMetadataList:
		partial, err := asPartial(obj)
		return partial, metav1.SchemeGroupVersion, err
	}
	return nil, schema.GroupVersion{}, notAcceptable()
}

// tableOptions reads ?includeObject=None|Object|Metadata.
func tableOptions(req *http.Request) (metav1.TableOptions, error) {
	var opts metav1.TableOptions
	if err := registry.ParameterCodec.DecodeParameters(req.URL.Query(), metav1.SchemeGroupVersion, &opts); err != nil {
		return opts, apierrors.NewBadRequest(err.Error())
	}
	switch opts.IncludeObject {
	case "", metav1.IncludeNone, metav1.IncludeMetadata, metav1.IncludeObject:
		return opts, nil
	}
	return opts, apierrors.NewBadRequest(fmt.Sprintf("includeObject %q is not supported: use None, Metadata or Object", opts.IncludeObject))
}

// asPartial keeps only the metadata of an object or of every item of a
// list, as the metadata client asks with as=PartialObjectMetadata[List].
func asPartial(obj runtime.Object) (runtime.Object, error) {
	if meta.IsListType(obj) {
		listMeta, err := meta.ListAccessor(obj)
		if err != nil {
			return nil, err
		}
		items, err := meta.ExtractList(obj)
		if err != nil {
			return nil, err
		}
		list := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{
			ResourceVersion:    listMeta.GetResourceVersion(),
			Continue:           listMeta.GetContinue(),
			RemainingItemCount: listMeta.GetRemainingItemCount(),
		}}
		for _, item := range items {
			m, err := meta.Accessor(item)
			if err != nil {
				return nil, err
			}
			list.Items = append(list.Items, *meta.AsPartialObjectMetadata(m))
		}
		list.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind(asPartialObjectMetadataList))
		return list, nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	partial := meta.AsPartialObjectMetadata(m)
	partial.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind(asPartialObjectMetadata))
	return partial, nil
}

// writeError answers with the Status err carries (every error that reaches
// a user is a Status), encoded as the client accepts, JSON otherwise.
func writeError(w http.ResponseWriter, req *http.Request, err error) {
	status := toStatus(err)
	filters.SetRetryAfter(w, err)
	if wantsErrorPage(req) {
		writeErrorPage(w, status) // login_page.go
		return
	}
	info := errorOutput(req)
	var buf bytes.Buffer
	if encErr := registry.Codecs.EncoderForVersion(info.Serializer, statusGroupVersion).Encode(status, &buf); encErr != nil {
		// A Status always encodes; if it does not, plain text is all that is left.
		http.Error(w, status.Message, int(status.Code))
		return
	}
	writeRaw(w, info.MediaType, int(status.Code), buf.Bytes())
}

// toStatus turns any error into the Status a client sees: API errors keep
// their code and reason, a deadline is 504 Timeout as upstream reports it,
// anything else is 500 InternalError.
func toStatus(err error) *metav1.Status {
	var status metav1.Status
	var apiStatus apierrors.APIStatus
	switch {
	case errors.As(err, &apiStatus):
		status = apiStatus.Status()
	case errors.Is(err, context.DeadlineExceeded):
		status = apierrors.NewTimeoutError(filters.TimeoutMessage, 0).ErrStatus
	default:
		status = apierrors.NewInternalError(err).ErrStatus
	}
	if status.Code == 0 {
		status.Code = http.StatusInternalServerError
	}
	status.Status = metav1.StatusFailure
	status.Kind, status.APIVersion = "Status", "v1"
	return &status
}

// addWarnings sets one `Warning: 299 - "..."` header per warning, as
// upstream does for unknown fields under fieldValidation=Warn.
func addWarnings(w http.ResponseWriter, warnings []string) {
	for _, text := range warnings {
		if value, err := utilnet.NewWarningHeader(299, "-", text); err == nil {
			w.Header().Add("Warning", value)
		}
	}
}
