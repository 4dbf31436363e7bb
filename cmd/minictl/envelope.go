package main

import (
	"bytes"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"

	"minicp/registry"
)

// protobufPrefix starts every value kube-apiserver stores as protobuf.
var protobufPrefix = []byte("k8s\x00")

// describeValue says what kind of bytes a stored value is, reading the
// protobuf envelope without any schema: after the 4-byte prefix comes a
// runtime.Unknown message whose field 1 is the TypeMeta (apiVersion = 1,
// kind = 2) and whose field 2 holds the object's own protobuf bytes.
func describeValue(v []byte) string {
	switch {
	case bytes.HasPrefix(v, protobufPrefix):
		env, err := readEnvelope(v[len(protobufPrefix):])
		if err != nil {
			return fmt.Sprintf("protobuf envelope %q, unreadable: %v", protobufPrefix, err)
		}
		return fmt.Sprintf("protobuf envelope %q + runtime.Unknown{typeMeta: {apiVersion: %s, kind: %s}, raw: %d bytes}",
			protobufPrefix, env.apiVersion, env.kind, env.rawLen)
	case bytes.HasPrefix(bytes.TrimSpace(v), []byte("{")):
		if gvk, ok := customResourceKind(v); ok {
			return fmt.Sprintf("JSON of a custom resource (%s, %s): always JSON, as upstream stores them", gvk.Kind, gvk.GroupVersion())
		}
		return "JSON (--storage-media-type=application/json)"
	default:
		return "opaque bytes"
	}
}

// customResourceKind returns the apiVersion and kind a stored JSON value
// names when they are not a built-in kind's: the object of a CRD.
func customResourceKind(v []byte) (schema.GroupVersionKind, bool) {
	gvk, err := json.DefaultMetaFactory.Interpret(v)
	if err != nil || gvk.Kind == "" || registry.Scheme.Recognizes(*gvk) {
		return schema.GroupVersionKind{}, false
	}
	return *gvk, true
}

type envelope struct {
	apiVersion, kind string
	rawLen           int
}

func readEnvelope(b []byte) (envelope, error) {
	var env envelope
	err := eachField(b, func(num protowire.Number, val []byte) error {
		switch num {
		case 1: // typeMeta
			return eachField(val, func(num protowire.Number, val []byte) error {
				switch num {
				case 1:
					env.apiVersion = string(val)
				case 2:
					env.kind = string(val)
				}
				return nil
			})
		case 2: // raw
			env.rawLen = len(val)
		}
		return nil
	})
	return env, err
}

// eachField calls fn for every length-delimited field of a protobuf message
// and skips fields of other wire types.
func eachField(b []byte, fn func(protowire.Number, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			continue
		}
		val, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		if err := fn(num, val); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
