package apiserver

import (
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"minicp/registry"
)

// The metadata client asks for object metadata in protobuf first, as
// upstream serves it; its lists, gets and watch events then come in
// protobuf, and client-go's metadata client decodes them.
func TestPartialObjectMetadataComesInProtobufWhenAskedFirst(t *testing.T) {
	ts := startTestServer(t, newFakeStore())
	ctx := testContext(t)
	if _, err := ts.clientset(t).CoreV1().Pods("default").Create(ctx, testPod("p"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	accept := func(as string) string {
		return "Accept: application/vnd.kubernetes.protobuf;as=" + as + ";g=meta.k8s.io;v=v1," +
			"application/json;as=" + as + ";g=meta.k8s.io;v=v1,application/json"
	}
	decode := func(resp rawResponse) runtime.Object {
		t.Helper()
		if got := resp.header.Get("Content-Type"); resp.code != http.StatusOK || got != runtime.ContentTypeProtobuf {
			t.Fatalf("got %d %q %q, want 200 in protobuf", resp.code, got, resp.body)
		}
		obj, _, err := registry.Codecs.UniversalDeserializer().Decode(resp.body, nil, nil)
		if err != nil {
			t.Fatalf("decoding protobuf: %v", err)
		}
		return obj
	}
	list, ok := decode(ts.do(t, "GET", "/api/v1/namespaces/default/pods", "", accept(asPartialObjectMetadataList))).(*metav1.PartialObjectMetadataList)
	if !ok || len(list.Items) != 1 || list.Items[0].Name != "p" || list.Items[0].Labels["app"] != "web" {
		t.Errorf("got %#v, want a PartialObjectMetadataList with the pod", list)
	}
	one, ok := decode(ts.do(t, "GET", "/api/v1/namespaces/default/pods/p", "", accept(asPartialObjectMetadata))).(*metav1.PartialObjectMetadata)
	if !ok || one.Name != "p" || one.UID == "" {
		t.Errorf("got %#v, want the pod's PartialObjectMetadata", one)
	}
	// Tables stay JSON or YAML only.
	if resp := ts.do(t, "GET", "/api/v1/namespaces/default/pods", "", "Accept: application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1"); resp.code != http.StatusNotAcceptable {
		t.Errorf("Table in protobuf: got %d, want 406", resp.code)
	}

	// A watch streams protobuf frames.
	resp := ts.do(t, "GET", "/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=1", "", accept(asPartialObjectMetadata))
	if got := resp.header.Get("Content-Type"); got != runtime.ContentTypeProtobuf+";stream=watch" {
		t.Errorf("watch Content-Type %q, want protobuf frames", got)
	}

	// client-go's metadata client, which sends that Accept header.
	w := listThenWatchMetadata(t, ts, schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "p")
	if _, err := ts.clientset(t).CoreV1().Pods("default").Create(ctx, testPod("q"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	expectMetadataEvent(t, w, watch.Added, "q")
}

// listThenWatchMetadata lists gvr's objects in namespace default with
// client-go's metadata client, expecting only one named name, and
// watches from that list; the watch stops with the test.
func listThenWatchMetadata(t *testing.T, ts *testServer, gvr schema.GroupVersionResource, name string) watch.Interface {
	t.Helper()
	ctx := testContext(t)
	md, err := metadata.NewForConfig(&rest.Config{Host: ts.http.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	objects := md.Resource(gvr).Namespace("default")
	list, err := objects.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != name {
		t.Fatalf("metadata List: %v %v, want only %s", list, err, name)
	}
	w, err := objects.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatalf("metadata Watch: %v", err)
	}
	t.Cleanup(w.Stop)
	return w
}

// expectMetadataEvent waits for w's next event and checks that it is an
// event of type about name's PartialObjectMetadata.
func expectMetadataEvent(t *testing.T, w watch.Interface, want watch.EventType, name string) {
	t.Helper()
	select {
	case ev := <-w.ResultChan():
		if m, ok := ev.Object.(*metav1.PartialObjectMetadata); ev.Type != want || !ok || m.Name != name {
			t.Errorf("got %s %#v, want %s %s as PartialObjectMetadata", ev.Type, ev.Object, want, name)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event in 10s")
	}
}

// Custom resources have no protobuf form, but their metadata is a
// built-in type: the metadata client (the garbage collector's informers)
// gets it in protobuf, while protobuf for the objects themselves stays
// 406.
func TestCustomResourceMetadataComesInProtobuf(t *testing.T) {
	ts := startWithWidgets(t)
	if r := ts.do(t, "POST", widgetsPath, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"}}`, "Content-Type: application/json"); r.code != http.StatusCreated {
		t.Fatalf("create: %d %s", r.code, r.body)
	}
	r := ts.do(t, "GET", widgetsPath, "", "Accept: application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
	if got := r.header.Get("Content-Type"); r.code != http.StatusOK || got != runtime.ContentTypeProtobuf {
		t.Errorf("metadata list in protobuf: got %d %q %s", r.code, got, r.body)
	}
	// Media types are case-insensitive: protobuf in capitals is still
	// protobuf, for a LIST and for one object.
	for _, tc := range []struct{ path, accept string }{
		{widgetsPath, "application/vnd.kubernetes.protobuf"},
		{widgetsPath, "Application/Vnd.Kubernetes.Protobuf"},
		{widgetsPath + "/w", "Application/Vnd.Kubernetes.Protobuf"},
	} {
		if r := ts.do(t, "GET", tc.path, "", "Accept: "+tc.accept); r.code != http.StatusNotAcceptable {
			t.Errorf("GET %s in %s: got %d %q, want 406", tc.path, tc.accept, r.code, r.body)
		}
	}
	w := listThenWatchMetadata(t, ts, schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, "w")
	if r := ts.do(t, "DELETE", widgetsPath+"/w", ""); r.code != http.StatusOK {
		t.Fatalf("delete: %d %s", r.code, r.body)
	}
	expectMetadataEvent(t, w, watch.Deleted, "w")
}
