package apiserver

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minicp/internal/testsupport"
	"minicp/registry"
)

// testServer is a Server over a store, behind an httptest server.
type testServer struct {
	*Server
	http *httptest.Server
	logs *testsupport.SyncBuffer // everything the server logged
}

// startTestServer serves store with the default Config, changed by
// configure if given; everything stops with the test.
func startTestServer(t *testing.T, store registry.Interface, configure ...func(*Config)) *testServer {
	t.Helper()
	logs := &testsupport.SyncBuffer{}
	cfg := NewConfig()
	cfg.AnonymousAuth = true // authentication has its own tests (authn_test.go)
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if _, fake := store.(*fakeStore); fake {
		// The fake store holds no namespaces for NamespaceLifecycle to
		// find; admission is tested against etcd (admission_test.go).
		cfg.DisableAdmissionPlugins = []string{NamespaceLifecycleName}
	}
	for _, f := range configure {
		f(&cfg)
	}
	s, err := New(cfg, testResources, store, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ts := httptest.NewUnstartedServer(s.Handler())
	ts.Config.RegisterOnShutdown(s.endWatches)
	ts.Start()
	t.Cleanup(func() {
		s.endWatches() // httptest.Close waits for open watches
		ts.Close()
		// The rest of the server's stop: its handlers' goroutines, and
		// the table it followed (testResources outlives it).
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return &testServer{Server: s, http: ts, logs: logs}
}

func (ts *testServer) clientset(t *testing.T) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: ts.http.URL, QPS: -1})
	if err != nil {
		t.Fatalf("clientset: %v", err)
	}
	return cs
}

func (ts *testServer) protobufClientset(t *testing.T) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{
		Host: ts.http.URL, QPS: -1,
		ContentConfig: rest.ContentConfig{
			ContentType:        "application/vnd.kubernetes.protobuf",
			AcceptContentTypes: "application/vnd.kubernetes.protobuf,application/json",
		},
	})
	if err != nil {
		t.Fatalf("protobuf clientset: %v", err)
	}
	return cs
}

// rawResponse is one HTTP exchange, body read.
type rawResponse struct {
	code   int
	header http.Header
	body   []byte
}

// do sends one request; headers are "Name: value" strings.
func (ts *testServer) do(t *testing.T, method, path, body string, headers ...string) rawResponse {
	t.Helper()
	req, err := http.NewRequest(method, ts.http.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ": ")
		req.Header.Set(name, value)
	}
	resp, err := ts.http.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading %s %s: %v", method, path, err)
	}
	return rawResponse{code: resp.StatusCode, header: resp.Header, body: raw}
}

// status decodes the response as a JSON Status, failing if it is not one.
func (r rawResponse) status(t *testing.T) metav1.Status {
	t.Helper()
	var s metav1.Status
	if err := json.Unmarshal(r.body, &s); err != nil || s.Kind != "Status" {
		t.Fatalf("response is not a Status (%v): %s", err, r.body)
	}
	return s
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func testPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
	}
}

const podBody = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`

// testResources is the table the package's tests serve.
var testResources = registry.NewBuiltinTable()
