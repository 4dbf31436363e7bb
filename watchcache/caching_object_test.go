package watchcache

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"minicp/registry"
)

// M8: an event is encoded once per media type, not once
// per watcher. The encoders are the apiserver's: the same call it makes
// for every watch event.
func TestAnEventIsEncodedOncePerMediaTypeWhateverTheNumberOfWatchers(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "default", ResourceVersion: "42"}}
	var encodings atomic.Int64
	shared := newCachingObject(pod, &encodings)

	mediaTypes := []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf}
	want := map[string][]byte{}
	for _, mt := range mediaTypes {
		data, err := encode(mt, pod.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		want[mt] = data
	}
	const watchers = 100
	var wg sync.WaitGroup
	for i := range watchers {
		mt := mediaTypes[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := encode(mt, shared)
			if err != nil || !bytes.Equal(got, want[mt]) {
				t.Errorf("%s: shared encoding differs from encoding the object itself (err %v)", mt, err)
			}
		}()
	}
	wg.Wait()
	if got := encodings.Load(); got != int64(len(mediaTypes)) {
		t.Errorf("%d watchers in 2 media types caused %d encodings, want 2", watchers, got)
	}
	if pod.Kind != "" || pod.APIVersion != "" {
		t.Errorf("encoding touched the shared object: kind %q apiVersion %q", pod.Kind, pod.APIVersion)
	}
	if got := Unwrap(shared).(*corev1.Pod); got == pod || got.Name != "nginx" {
		t.Error("Unwrap must return a private copy of the object")
	}
}

// encode encodes obj as the apiserver encodes a watch event's object.
func encode(mediaType string, obj runtime.Object) ([]byte, error) {
	info, ok := runtime.SerializerInfoForMediaType(registry.Codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		return nil, fmt.Errorf("no serializer for %s", mediaType)
	}
	var buf bytes.Buffer
	err := registry.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion).Encode(obj, &buf)
	return buf.Bytes(), err
}

// Watches that start with the current state send each object as the
// element's own wrapper, the one a LIST hands out too: its encodings are
// made once for every such watch, not once per watcher.
func TestWatchesFromTheCurrentStateShareEachObjectsEncodings(t *testing.T) {
	h := startCache(t)
	h.createNamespace("default")
	h.createPod("default", "a", "node-1")
	h.listPods("default", registry.ListOptions{}) // the cache has the pod
	var objects []runtime.Object
	for range 2 {
		w, err := h.cache.Watch(h.ctx, podsRes, "default", registry.ListOptions{ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		var ev watch.Event
		var ok bool
		select { // not nextEvent, which unwraps
		case ev, ok = <-w.ResultChan():
		case <-time.After(10 * time.Second):
			t.Fatal("no event within 10s")
		}
		w.Stop()
		if !ok || ev.Type != watch.Added {
			t.Fatalf("first event: %v %v, want ADDED", ev, ok)
		}
		objects = append(objects, ev.Object)
	}
	shared, _, err := h.cache.ListShared(h.ctx, podsRes, "default", registry.ListOptions{ResourceVersion: "0"})
	if err != nil || shared == nil || len(shared.Items) != 1 {
		t.Fatalf("ListShared: %v %v", shared, err)
	}
	if item, _ := shared.Items[0].(runtime.Object); objects[0] != objects[1] || objects[0] != item {
		t.Fatalf("the two watches and the LIST got different wrappers of pod a: %p %p %p", objects[0], objects[1], shared.Items[0])
	}
}
