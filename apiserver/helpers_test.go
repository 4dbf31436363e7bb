package apiserver

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minicp/apiserver/admission"
	"minicp/internal/testetcd"
	"minicp/internal/testsupport"
	"minicp/kinds"
	"minicp/registry"
)

// testServer is a Server over a store, behind an httptest server.
type testServer struct {
	*Server
	http *httptest.Server
	logs *testsupport.SyncBuffer // everything the server logged
}

// startTestServer serves store (over testResources) with the tests'
// Config, changed by configure if given; everything stops with the test.
func startTestServer(t *testing.T, store registry.Interface, configure ...func(*Config)) *testServer {
	t.Helper()
	return startServing(t, testResources, store, nil, configure...)
}

// testConfig is the Config the package's tests serve with: anonymous
// requests allowed (authentication has its own tests, e2e/auth_test.go),
// everything logged into logs, and over the fake store, which holds no
// namespaces for it to find, no NamespaceLifecycle (admission is tested
// against etcd, admission_test.go).
func testConfig(store registry.Interface, logs io.Writer) Config {
	cfg := NewConfig()
	cfg.AnonymousAuth = true
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if _, fake := store.(*fakeStore); fake {
		cfg.DisableAdmissionPlugins = []string{admission.NamespaceLifecycleName}
	}
	return cfg
}

// startServing serves store over table behind an httptest server, with
// testConfig changed by configure, and setup (if not nil) applied to the
// Server before it serves anything. At the test's end the server stops
// whole: its watches end (httptest's Close waits for them), then
// Shutdown waits for its handlers and unsubscribes it from table.
func startServing(t *testing.T, table *registry.Table, store registry.Interface, setup func(*Server), configure ...func(*Config)) *testServer {
	t.Helper()
	logs := &testsupport.SyncBuffer{}
	cfg := testConfig(store, logs)
	for _, f := range configure {
		f(&cfg)
	}
	s, err := New(cfg, table, store, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if setup != nil {
		setup(s)
	}
	ts := httptest.NewUnstartedServer(s.Handler())
	ts.Config.RegisterOnShutdown(s.endWatches)
	ts.Start()
	t.Cleanup(func() {
		s.endWatches()
		ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return &testServer{Server: s, http: ts, logs: logs}
}

// startListening starts a server of testResources over store on a free
// port of the loopback address (Start), with testConfig. The test shuts
// it down; if it does not get that far, the server shuts down at its end
// (a second Shutdown finds nothing more to do).
func startListening(t *testing.T, store registry.Interface) *Server {
	t.Helper()
	cfg := testConfig(store, &testsupport.SyncBuffer{})
	cfg.Port = 0
	s, err := New(cfg, testResources, store, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := s.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown at the test's end: %v", err)
		}
	})
	return s
}

// clientsetOf is a client-go clientset of a server started with
// startListening.
func clientsetOf(t *testing.T, s *Server) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL()})
	if err != nil {
		t.Fatalf("clientset: %v", err)
	}
	return cs
}

// watchAllPods opens a client-go watch of every pod through a server
// started with startListening and waits until the server serves it; the
// watch stops with the test.
func watchAllPods(t *testing.T, s *Server) watch.Interface {
	t.Helper()
	w, err := clientsetOf(t, s).CoreV1().Pods("").Watch(testContext(t), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	t.Cleanup(w.Stop)
	testsupport.Eventually(t, 5*time.Second, "the watch to be open", func() bool { return s.openWatches.Load() == 1 })
	return w
}

// newEtcdStore is the real etcd-backed registry.Store of table, on an
// embedded single-member etcd that stops with the test, and a client of
// that etcd. The store's log is dropped unless opts says where.
func newEtcdStore(t *testing.T, table *registry.Table, opts registry.Options) (*registry.Store, *clientv3.Client) {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	etcd := testetcd.Start(t)
	store, err := registry.NewStore(etcd.Client(), table, opts)
	if err != nil {
		t.Fatalf("NewStore: %v", err)
	}
	return store, etcd.Client()
}

// createDefaultNamespace creates the "default" namespace, which the
// tests' objects live in and NamespaceLifecycle looks for.
func (ts *testServer) createDefaultNamespace(t *testing.T) {
	t.Helper()
	if _, err := ts.clientset(t).CoreV1().Namespaces().Create(testContext(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the default namespace: %v", err)
	}
}

func (ts *testServer) clientset(t *testing.T) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: ts.http.URL, QPS: -1})
	if err != nil {
		t.Fatalf("clientset: %v", err)
	}
	return cs
}

// clientsets are client-go clientsets of the test server by the form
// they speak: "json" and "protobuf".
func (ts *testServer) clientsets(t *testing.T) map[string]*kubernetes.Clientset {
	t.Helper()
	return map[string]*kubernetes.Clientset{"json": ts.clientset(t), "protobuf": ts.protobufClientset(t)}
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

// send sends one request to srv and returns its response, body unread;
// headers are "Name: value" strings.
func send(t *testing.T, ctx context.Context, srv *httptest.Server, method, path, body string, headers ...string) *http.Response {
	t.Helper()
	return testsupport.Send(t, ctx, srv, method, path, body, headers...)
}

// do sends one request to the test server and reads its response;
// headers are "Name: value" strings.
func (ts *testServer) do(t *testing.T, method, path, body string, headers ...string) rawResponse {
	t.Helper()
	return fetch(t, ts.http, method, path, body, headers...)
}

// fetch sends one request to srv and reads its response; headers are
// "Name: value" strings.
func fetch(t *testing.T, srv *httptest.Server, method, path, body string, headers ...string) rawResponse {
	t.Helper()
	r := testsupport.Fetch(t, srv, method, path, body, headers...)
	return rawResponse{code: r.Code, header: r.Header, body: r.Body}
}

// status decodes the response as a JSON Status, failing if it is not one.
func (r rawResponse) status(t *testing.T) metav1.Status {
	t.Helper()
	return testsupport.Response{Code: r.code, Header: r.header, Body: r.body}.Status(t)
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
var testResources = kinds.NewTable()
