package watchcache

import (
	"bytes"
	"io"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// cachingObject wraps one object of a watch event so that it is encoded
// once per encoding, however many watchers send it. It implements
// runtime.CacheableObject: the apimachinery JSON, protobuf and versioning
// encoders all check for it and call CacheEncode with their identifier
// (which names the media type and target version), so the apiserver's
// ordinary
//
//	Codecs.EncoderForVersion(serializer, gv).Encode(event.Object, w)
//
// encodes the first time and writes the remembered bytes every other time.
// This is upstream's cachingObject, reduced to what minicp needs: it is
// read-only, and code that needs the object itself (a Table, metadata only)
// calls GetObject for a private copy.
//
// The wrapped object is shared with the cache's store and never modified:
// encoders briefly set an object's apiVersion and kind, so each encoding
// works on its own deep copy.
type cachingObject struct {
	obj runtime.Object
	// encodings counts real encodings, for /debug/watchcache (the
	// resource's stats); nil counts nothing.
	encodings *atomic.Int64

	// mu guards results. It is a leaf lock: held only to find or add an
	// entry, never while encoding. Every watcher of an event looks its
	// encoding up at about the same time, so lookups share a read lock.
	mu      sync.RWMutex
	results map[runtime.Identifier]*encodeResult
}

// encodeResult is one encoding of the object, computed once.
type encodeResult struct {
	once sync.Once
	raw  []byte
	err  error
}

var _ runtime.CacheableObject = (*cachingObject)(nil)

func newCachingObject(obj runtime.Object, encodings *atomic.Int64) *cachingObject {
	return &cachingObject{obj: obj, encodings: encodings}
}

// CacheEncode writes the object encoded by encode (an encoder named id),
// encoding it only the first time id asks. It writes the kept bytes with a
// single Write and never modifies them, so a writer may keep the slice
// (registry.SharedList relies on it).
func (o *cachingObject) CacheEncode(id runtime.Identifier, encode func(runtime.Object, io.Writer) error, w io.Writer) error {
	r := o.result(id)
	r.once.Do(func() {
		var buf bytes.Buffer
		r.err = encode(o.obj.DeepCopyObject(), &buf)
		r.raw = buf.Bytes()
		if o.encodings != nil {
			o.encodings.Add(1)
		}
	})
	if r.err != nil {
		return r.err
	}
	_, err := w.Write(r.raw)
	return err
}

func (o *cachingObject) result(id runtime.Identifier) *encodeResult {
	o.mu.RLock()
	r, ok := o.results[id]
	o.mu.RUnlock()
	if ok {
		return r
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.results == nil {
		o.results = map[runtime.Identifier]*encodeResult{}
	}
	if r, ok = o.results[id]; !ok {
		r = &encodeResult{}
		o.results[id] = r
	}
	return r
}

// GetObject returns a deep copy of the object, which the caller may modify.
func (o *cachingObject) GetObject() runtime.Object { return o.obj.DeepCopyObject() }

// GetObjectKind is empty: the wrapper is never encoded as itself (encoders
// go through CacheEncode), and a shared kind would be a data race.
func (o *cachingObject) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject returns a new wrapper around a copy of the object.
func (o *cachingObject) DeepCopyObject() runtime.Object {
	return newCachingObject(o.obj.DeepCopyObject(), o.encodings)
}

// Unwrap returns the object of a watch event as a plain object: the
// wrapped object's copy for events of the watch cache, obj itself
// otherwise. For consumers of registry.Interface that need concrete types.
func Unwrap(obj runtime.Object) runtime.Object {
	if co, ok := obj.(runtime.CacheableObject); ok {
		return co.GetObject()
	}
	return obj
}
