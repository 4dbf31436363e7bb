package apiserver

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

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
// cached object (its runtime.CacheableObject), so a LIST encodes only the objects
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
// SharedList: plain JSON or protobuf. A custom resource (TextOnly) never
// gets here in protobuf: textOnly removed the protobuf clauses of its
// Accept header but those asking for metadata, which are not plain.
//
// Custom resources qualify in JSON. Each served version has a cache of
// its own, whose objects were decoded at that version (their apiVersion
// is the version the LIST was made at), so the items' kept encodings are
// already those of the requested version.
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
// Every item's bytes are found (or encoded) before anything is written, so
// an encoding failure is still answered with a Status; the body is then
// streamed from the items' kept bytes with its Content-Length, never
// assembled in one buffer.
func writeSharedList(w http.ResponseWriter, req *http.Request, res *registry.Resource, out output, list *registry.SharedList) {
	endEncoding := reqtrace.From(req.Context()).Begin(reqtrace.Encoding)
	var body listBody
	var err error
	if out.info.MediaType == runtime.ContentTypeProtobuf {
		body, err = sharedListProtobuf(res, list)
	} else {
		body, err = sharedListJSON(res, list)
	}
	endEncoding()
	if err != nil {
		writeError(w, req, apierrors.NewInternalError(fmt.Errorf("encoding the response: %w", err)))
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(body.size()))
	writeHeader(w, out.info.MediaType, http.StatusOK)
	// A failed write means the client went away; there is no one to tell.
	_, _ = body.writeTo(w)
}

// listBody is an encoded list in parts, in order: many are shared with the
// cache's items and must not be modified.
type listBody [][]byte

func (b listBody) size() int {
	n := 0
	for _, part := range b {
		n += len(part)
	}
	return n
}

// writeTo writes the parts through one buffer (at most 64 KiB), so that
// thousands of small items become a few large writes.
func (b listBody) writeTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, min(b.size(), 64<<10))
	var n int64
	for _, part := range b {
		m, err := bw.Write(part)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, bw.Flush()
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

var (
	jsonItemsOpen  = []byte(`"items":[`)
	jsonItemsClose = []byte("]}\n")
	jsonComma      = []byte(",")
	// jsonUnstructuredItems is an empty UnstructuredList's items.
	jsonUnstructuredItems = []byte(`"items":[]`)
)

// sharedListJSON is the list as the JSON serializer writes a typed list:
// {"kind":..,"apiVersion":..,"metadata":{..},"items":[..]} and a newline.
// The envelope is the encoding of the same list with no items, with the
// items' bytes put between its brackets.
func sharedListJSON(res *registry.Resource, list *registry.SharedList) (listBody, error) {
	empty, err := emptyList(res, list.ResourceVersion)
	if err != nil {
		return nil, err
	}
	head, tail, err := jsonEnvelope(res, empty)
	if err != nil {
		return nil, err
	}
	body := make(listBody, 0, 2*len(list.Items)+3)
	body = append(body, head)
	for i, item := range list.Items {
		raw, err := itemBytes(item, jsonItemID, func(obj runtime.Object, w io.Writer) error {
			raw, err := json.Marshal(obj)
			if err == nil {
				_, err = w.Write(raw)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if i > 0 {
			body = append(body, jsonComma)
		}
		body = append(body, raw)
	}
	return append(body, tail), nil
}

// jsonEnvelope is the JSON of the list empty without its items: what comes
// before the first item (through `"items":[`) and after the last (from
// `]`, with the serializer's closing newline).
//
// A typed list's items field is last and never omitted: `"items":null}`
// for a list that was never given items. An UnstructuredList (custom
// resources) is written as a map, keys sorted, with `"items":[]` among
// them; a string value holding those bytes would have its quotes escaped,
// so the first unescaped occurrence is the key.
func jsonEnvelope(res *registry.Resource, empty runtime.Object) (head, tail []byte, err error) {
	envelope, err := json.Marshal(empty)
	if err != nil {
		return nil, nil, err
	}
	if _, ok := empty.(runtime.Unstructured); ok {
		before, after, found := bytes.Cut(envelope, jsonUnstructuredItems)
		if !found {
			return nil, nil, fmt.Errorf("the %s envelope has no items: %s", res.ListKind, envelope)
		}
		head = append(before[:len(before):len(before)], jsonItemsOpen...)
		tail = append(append([]byte("]"), after...), '\n')
		return head, tail, nil
	}
	before, found := bytes.CutSuffix(envelope, []byte(`"items":null}`))
	if !found {
		return nil, nil, fmt.Errorf("the %s envelope does not end with its items: %s", res.ListKind, envelope)
	}
	return append(before[:len(before):len(before)], jsonItemsOpen...), jsonItemsClose, nil
}

// The identifiers of a list item's encodings in its CacheableObject: the
// object alone, as it appears in a list's items (watch frames have others).
const (
	jsonItemID     runtime.Identifier = "list-item;application/json"
	protobufItemID runtime.Identifier = "list-item;application/vnd.kubernetes.protobuf"
)

// itemBytes is item's encoding id, made by encode the first time any LIST
// asks and kept by the item. A CacheableObject of registry.SharedList writes
// its kept bytes in one Write and never modifies them, so the slice is kept
// as it is rather than copied.
func itemBytes(item runtime.CacheableObject, id runtime.Identifier, encode func(runtime.Object, io.Writer) error) ([]byte, error) {
	var kept keptSlice
	if err := item.CacheEncode(id, encode, &kept); err != nil {
		return nil, err
	}
	return kept, nil
}

// keptSlice keeps what is written to it: a single Write's slice as it is
// (see itemBytes), more than one appended into a copy.
type keptSlice []byte

func (k *keptSlice) Write(p []byte) (int, error) {
	if *k == nil {
		*k = p[:len(p):len(p)]
	} else {
		*k = append((*k)[:len(*k):len(*k)], p...)
	}
	return len(p), nil
}

// protoMarshaler is what every generated API type implements.
type protoMarshaler interface {
	Marshal() ([]byte, error)
}

// sharedListProtobuf is the list as the protobuf serializer writes a typed
// list: the "k8s\x00" prefix, then a runtime.Unknown naming the list's kind
// whose raw bytes are the list message (its ListMeta as field 1, each item
// as field 2).
func sharedListProtobuf(res *registry.Resource, list *registry.SharedList) (listBody, error) {
	empty, err := emptyList(res, list.ResourceVersion)
	if err != nil {
		return nil, err
	}
	listMeta, err := protoListMeta(empty)
	if err != nil {
		return nil, err
	}
	// The list message: ListMeta, then the items, each after its header
	// (tag and length); the headers share one array.
	raw := make(listBody, 0, 2*len(list.Items)+2)
	headers := make([]byte, 0, (len(list.Items)+1)*(1+binary.MaxVarintLen64))
	headers, raw = appendField(headers, raw, listMetaTag, listMeta)
	for _, item := range list.Items {
		encoded, err := itemBytes(item, protobufItemID, func(obj runtime.Object, w io.Writer) error {
			m, ok := obj.(protoMarshaler)
			if !ok {
				return fmt.Errorf("%T cannot be encoded as protobuf", obj)
			}
			raw, err := m.Marshal()
			if err == nil {
				_, err = w.Write(raw)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		headers, raw = appendField(headers, raw, listItemTag, encoded)
	}
	// The envelope around it: MarshalToWriter writes the fields before and
	// after the raw bytes; here it is asked for them alone.
	gvk := empty.GetObjectKind().GroupVersionKind()
	unknown := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}}
	var envelope bytes.Buffer
	envelope.Write(protobufPrefix)
	rawAt := -1
	rawSize := raw.size()
	if _, err := unknown.MarshalToWriter(&envelope, rawSize, func(io.Writer) (int, error) {
		rawAt = envelope.Len()
		return rawSize, nil
	}); err != nil {
		return nil, err
	}
	if rawAt < 0 {
		return nil, fmt.Errorf("encoding a runtime.Unknown did not ask for its raw bytes")
	}
	env := envelope.Bytes()
	body := make(listBody, 0, len(raw)+2)
	body = append(body, env[:rawAt])
	body = append(body, raw...)
	return append(body, env[rawAt:]), nil
}

// appendField adds one length-delimited field to parts: its header (tag
// and length, appended to headers, which never grows past its capacity, so
// earlier headers stay where they are) and its bytes.
func appendField(headers []byte, parts listBody, tag byte, raw []byte) ([]byte, listBody) {
	start := len(headers)
	headers = append(headers, tag)
	headers = binary.AppendUvarint(headers, uint64(len(raw)))
	return headers, append(parts, headers[start:len(headers):len(headers)], raw)
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
