package registry

// Some served resources are another resource's objects in another shape:
// events.k8s.io/v1 Events are core/v1 Events, stored once, at one key, as
// core/v1 (upstream stores them so, and a client of either group reads
// what the other wrote). Such a resource names its StoredForm, and its
// storage codec converts on the way in and out; nothing else in the Store
// or the watch cache knows.

import (
	"fmt"
	"io"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// StoredForm is how a resource's objects are kept in etcd when that is
// another kind's shape.
type StoredForm struct {
	// GroupVersion is the version the stored objects are encoded in.
	GroupVersion schema.GroupVersion
	// New returns an empty stored object.
	New func() runtime.Object
	// ToStorage and FromStorage convert between the served and the
	// stored shape, losing nothing either way.
	ToStorage   func(served runtime.Object) runtime.Object
	FromStorage func(stored runtime.Object) runtime.Object
}

// convertingCodec encodes and decodes a served object through its stored
// form with the stored form's codec.
type convertingCodec struct {
	stored runtime.Codec
	form   *StoredForm
}

var _ runtime.Codec = convertingCodec{}

func (c convertingCodec) Encode(obj runtime.Object, w io.Writer) error {
	return c.stored.Encode(c.form.ToStorage(obj), w)
}

func (c convertingCodec) Identifier() runtime.Identifier {
	return runtime.Identifier("converting:" + string(c.stored.Identifier()))
}

// Decode decodes the stored object and returns it in the served shape,
// written into into when one is given (as the Store passes res.New()).
func (c convertingCodec) Decode(data []byte, _ *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	stored, gvk, err := c.stored.Decode(data, nil, c.form.New())
	if err != nil {
		return nil, gvk, err
	}
	served := c.form.FromStorage(stored)
	if into == nil {
		return served, gvk, nil
	}
	dst, src := reflect.ValueOf(into), reflect.ValueOf(served)
	if dst.Type() != src.Type() {
		return nil, gvk, fmt.Errorf("decoding a %T into a %T", served, into)
	}
	dst.Elem().Set(src.Elem())
	return into, gvk, nil
}
