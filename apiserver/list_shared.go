package apiserver

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"minicp/registry"
	"minicp/reqtrace"
)

// A LIST the watch cache answers from memory comes as a registry.SharedList:
// the cache's own objects, not copied into a typed list. For plain JSON and
// protobuf (no Table, no metadata-only form) the apiserver writes the list
// around the items' encodings, and each item's encoding is kept with the
// cached object (registry.SharedItem), so a LIST encodes only the objects
// that changed since the last one. The bytes are exactly those of the typed
// list encoded whole (list_shared_test.go checks it), as upstream's streaming
// list encoders write them.

// Protobuf tags of a list's fields: metadata is field 1, items field 2, both
// length-delimited (wire type 2).
const (
	listMetaTag = 1<<3 | 2
	listItemTag = 2<<3 | 2
)

// sharedListEncodable reports whether a LIST in out can be written from a
// SharedList.
func sharedListEncodable(out output) bool {
	if out.as != "" {
		return false
	}
	switch out.info.MediaType {
	case runtime.ContentTypeJSON, runtime.ContentTypeProtobuf:
		return true
	}
	return false
}

// writeSharedList encodes list in out's media type and writes it with 200.
func writeSharedList(w http.ResponseWriter, req *http.Request, res *registry.Resource, out output, list *registry.SharedList) {
	endEncoding := reqtrace.From(req.Context()).Begin(reqtrace.Encoding)
	var buf bytes.Buffer
	var err error
	if out.info.MediaType == runtime.ContentTypeProtobuf {
		err = encodeSharedListProtobuf(&buf, res, list)
	} else {
		err = encodeSharedListJSON(&buf, res, list)
	}
	endEncoding()
	if err != nil {
		writeError(w, req, apierrors.NewInternalError(fmt.Errorf("encoding the response: %w", err)))
		return
	}
	writeRaw(w, out.info.MediaType, http.StatusOK, buf.Bytes())
}

// emptyList is res's list kind with no items at rv, in its group version.
func emptyList(res *registry.Resource, rv int64) (runtime.Object, error) {
	list := res.NewList()
	if err := registry.StampList(list, rv); err != nil {
		return nil, err
	}
	gvk := res.GroupVersion.WithKind(res.ListKind)
	list.GetObjectKind().SetGroupVersionKind(gvk)
	return list, nil
}

// encodeSharedListJSON writes the list as the JSON serializer writes a typed
// list: {"kind":..,"apiVersion":..,"metadata":{..},"items":[..]} and a
// newline. The envelope is the encoding of the same list with no items,
// with the items' bytes put between its brackets.
func encodeSharedListJSON(w *bytes.Buffer, res *registry.Resource, list *registry.SharedList) error {
	empty, err := emptyList(res, list.ResourceVersion)
	if err != nil {
		return err
	}
	envelope, err := json.Marshal(empty)
	if err != nil {
		return err
	}
	// A list kind's items field is last and never omitted: `"items":null}`
	// for a list that was never given items.
	head, found := bytes.CutSuffix(envelope, []byte(`"items":null}`))
	if !found {
		return fmt.Errorf("the %s envelope does not end with its items: %s", res.ListKind, envelope)
	}
	w.Write(head)
	w.WriteString(`"items":[`)
	for i, item := range list.Items {
		raw, err := item.Encoded("json", func(obj runtime.Object) ([]byte, error) { return json.Marshal(obj) })
		if err != nil {
			return err
		}
		if i > 0 {
			w.WriteByte(',')
		}
		w.Write(raw)
	}
	w.WriteString("]}\n")
	return nil
}

// protoMarshaler is what every generated API type implements.
type protoMarshaler interface {
	Marshal() ([]byte, error)
}

// encodeSharedListProtobuf writes the list as the protobuf serializer
// writes a typed list: the "k8s\x00" prefix, then a runtime.Unknown naming
// the list's kind whose raw bytes are the list message (its ListMeta as
// field 1, each item as field 2).
func encodeSharedListProtobuf(w io.Writer, res *registry.Resource, list *registry.SharedList) error {
	empty, err := emptyList(res, list.ResourceVersion)
	if err != nil {
		return err
	}
	listMeta, err := protoListMeta(empty)
	if err != nil {
		return err
	}
	items := make([][]byte, len(list.Items))
	size := fieldSize(len(listMeta))
	for i, item := range list.Items {
		raw, err := item.Encoded("protobuf", func(obj runtime.Object) ([]byte, error) {
			m, ok := obj.(protoMarshaler)
			if !ok {
				return nil, fmt.Errorf("%T cannot be encoded as protobuf", obj)
			}
			return m.Marshal()
		})
		if err != nil {
			return err
		}
		items[i] = raw
		size += fieldSize(len(raw))
	}
	gvk := empty.GetObjectKind().GroupVersionKind()
	unknown := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}}
	if _, err := w.Write(protobufPrefix); err != nil {
		return err
	}
	_, err = unknown.MarshalToWriter(w, size, func(w io.Writer) (int, error) {
		n, err := writeField(w, listMetaTag, listMeta)
		for _, raw := range items {
			if err != nil {
				break
			}
			var m int
			m, err = writeField(w, listItemTag, raw)
			n += m
		}
		return n, err
	})
	return err
}

// protoListMeta is the protobuf encoding of list's ListMeta.
func protoListMeta(list runtime.Object) ([]byte, error) {
	accessor, ok := list.(metav1.ListMetaAccessor)
	if !ok {
		return nil, fmt.Errorf("%T has no ListMeta", list)
	}
	lm, ok := accessor.GetListMeta().(*metav1.ListMeta)
	if !ok {
		return nil, fmt.Errorf("%T's ListMeta is a %T", list, accessor.GetListMeta())
	}
	return lm.Marshal()
}

// fieldSize is the size of a length-delimited field of n bytes: its tag
// (one byte for fields 1 to 15), the length as a varint, the bytes.
func fieldSize(n int) int {
	var varint [binary.MaxVarintLen64]byte
	return 1 + binary.PutUvarint(varint[:], uint64(n)) + n
}

// writeField writes one length-delimited field.
func writeField(w io.Writer, tag byte, raw []byte) (int, error) {
	var header [1 + binary.MaxVarintLen64]byte
	header[0] = tag
	n := 1 + binary.PutUvarint(header[1:], uint64(len(raw)))
	m, err := w.Write(header[:n])
	if err != nil {
		return m, err
	}
	k, err := w.Write(raw)
	return m + k, err
}
