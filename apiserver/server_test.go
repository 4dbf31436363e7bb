package apiserver

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/internal/testsupport"
)

// Off loopback the server speaks TLS only: plain HTTP is refused there.
func TestValidateRefusesPlainHTTPOffLoopback(t *testing.T) {
	for _, tc := range []struct {
		address string
		tls     bool
		wantErr string
	}{
		{"127.0.0.1", false, ""},
		{"::1", false, ""},
		{"0.0.0.0", false, "refusing to serve plain HTTP on 0.0.0.0: off loopback minicp serves TLS only"},
		{"192.168.1.10", false, "refusing to serve plain HTTP on 192.168.1.10"},
		{"192.168.1.10", true, ""},
		{"localhost", false, "is not an IP address"},
	} {
		cfg := NewConfig()
		cfg.BindAddress = tc.address
		if tc.tls {
			cfg.TLSCertFile, cfg.TLSPrivateKeyFile = "server.crt", "server.key"
		}
		err := cfg.Validate()
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: got %v, want it accepted", tc.address, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: got %v, want an error containing %q", tc.address, err, tc.wantErr)
		}
	}
}

func TestNewConfigHasUpstreamDefaultsAndFlagsChangeThem(t *testing.T) {
	cfg := NewConfig()
	if cfg.BindAddress != "127.0.0.1" || cfg.Port != 8080 || cfg.RequestTimeout != time.Minute || cfg.MaxRequestBodyBytes != 3<<20 || cfg.Verbosity != 0 {
		t.Errorf("got %+v, want 127.0.0.1:8080, 60s, 3 MiB, -v=0", cfg)
	}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	cfg.AddFlags(fs)
	if err := fs.Parse([]string{"--bind-address=::1", "--port=0", "--request-timeout=5s", "-v=2"}); err != nil {
		t.Fatalf("parse: %v", err)
	}
	if cfg.BindAddress != "::1" || cfg.Port != 0 || cfg.RequestTimeout != 5*time.Second || cfg.Verbosity != 2 {
		t.Errorf("got %+v after flags", cfg)
	}
}

// Start listens on a free port; Shutdown stops listening, ends open
// watches (which would otherwise hold it for half an hour) and returns.
func TestShutdownEndsOpenWatchesAndStopsListening(t *testing.T) {
	store := newFakeStore()
	s := startListening(t, store)
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") || strings.HasSuffix(s.URL(), ":0") {
		t.Fatalf("got URL %q, want http://127.0.0.1:<port>", s.URL())
	}
	w := watchAllPods(t, s)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	select {
	case _, ok := <-w.ResultChan():
		if ok {
			t.Error("got an event, want the watch closed")
		}
	case <-time.After(5 * time.Second):
		t.Error("the watch is still open after Shutdown")
	}
	if store.openWatchers() != 0 {
		t.Error("the store watch was not stopped")
	}
	if conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL(), "http://")); err == nil {
		conn.Close()
		t.Error("the server still accepts connections after Shutdown")
	}
}

// Shutdown waits for a write in flight, so that it is in storage before
// the caller closes etcd.
func TestShutdownWaitsForInFlightWrites(t *testing.T) {
	store := newFakeStore()
	store.createEntered, store.createGate = make(chan struct{}, 1), make(chan struct{})
	s := startListening(t, store)
	cs := clientsetOf(t, s)
	created := make(chan error, 1)
	go func() {
		_, err := cs.CoreV1().ConfigMaps("default").Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late"}}, metav1.CreateOptions{})
		created <- err
	}()
	<-store.createEntered // the write is inside the store

	shutdown := make(chan error, 1)
	go func() { shutdown <- s.Shutdown(context.Background()) }()
	testsupport.Eventually(t, 5*time.Second, "the listener to close", func() bool {
		conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL(), "http://"))
		if err == nil {
			conn.Close()
		}
		return err != nil
	})
	select {
	case err := <-shutdown:
		t.Fatalf("Shutdown returned (%v) while a write was in flight", err)
	default:
	}
	close(store.createGate)
	if err := <-created; err != nil {
		t.Errorf("the in-flight create failed: %v", err)
	}
	if err := <-shutdown; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// A panic in a handler is a 500 InternalError Status and a log line with
// the stack where it happened; the server goes on serving. Watches run
// outside the deadline goroutine, so both paths are checked.
func TestPanicInAHandlerIsAnInternalErrorStatus(t *testing.T) {
	for _, tc := range []struct{ method, path string }{
		{"List", "/api/v1/namespaces/default/pods"},
		{"Watch", "/api/v1/namespaces/default/pods?watch=true"},
	} {
		t.Run(tc.method, func(t *testing.T) {
			store := newFakeStore()
			store.panicOn = tc.method
			ts := startTestServer(t, store)
			resp := ts.do(t, "GET", tc.path, "")
			status := resp.status(t)
			if resp.code != http.StatusInternalServerError || status.Reason != metav1.StatusReasonInternalError {
				t.Errorf("got %d %q, want 500 InternalError", resp.code, status.Reason)
			}
			logs := ts.logs.String()
			if !strings.Contains(logs, "panic serving request") || !strings.Contains(logs, tc.method+" panics on purpose") || !strings.Contains(logs, "fakestore_test.go") {
				t.Errorf("the panic and its origin were not logged:\n%s", logs)
			}
			if resp := ts.do(t, "GET", "/api/v1/namespaces/default/pods/p", ""); resp.code != http.StatusNotFound {
				t.Errorf("after the panic: got %d, want the server still answering (404)", resp.code)
			}
		})
	}
}

// A request that outlives its deadline is 504 Timeout, with upstream's
// message; ?timeout= shortens the server's limit.
func TestRequestPastItsDeadlineIsATimeoutStatus(t *testing.T) {
	store := newFakeStore()
	store.blockGets = true
	ts := startTestServer(t, store)
	start := time.Now()
	resp := ts.do(t, "GET", "/api/v1/namespaces/default/pods/p?timeout=200ms", "")
	status := resp.status(t)
	if resp.code != http.StatusGatewayTimeout || status.Reason != metav1.StatusReasonTimeout {
		t.Errorf("got %d %q, want 504 Timeout", resp.code, status.Reason)
	}
	if want := "Timeout: request did not complete within requested timeout - context deadline exceeded"; status.Message != want {
		t.Errorf("got message %q, want %q", status.Message, want)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("took %s, want about 200ms", elapsed)
	}
}

// At -v=2 every request is one log line; at 0 there are none.
func TestRequestsAreLoggedOnlyAtVerbosityTwo(t *testing.T) {
	for _, verbosity := range []int{0, 2} {
		ts := startTestServer(t, newFakeStore(), func(c *Config) { c.Verbosity = verbosity })
		ts.do(t, "GET", "/api/v1/namespaces/default/configmaps?limit=5", "")
		logged := strings.Contains(ts.logs.String(), `msg=request verb=LIST path="/api/v1/namespaces/default/configmaps?limit=5" code=200`)
		if logged != (verbosity >= 2) {
			t.Errorf("-v=%d: request logged = %v; logs:\n%s", verbosity, logged, ts.logs.String())
		}
	}
}

// Metrics are labelled as upstream labels apiserver_request_total.
func TestMetricLabelsFollowUpstream(t *testing.T) {
	for _, tc := range []struct {
		method, target, contentType string
		wantVerb, wantScope         string
	}{
		{"GET", "/api/v1/namespaces/default/pods/p", "", "GET", "resource"},
		{"GET", "/api/v1/namespaces/default/pods", "", "LIST", "namespace"},
		{"GET", "/api/v1/pods", "", "LIST", "cluster"},
		{"GET", "/api/v1/namespaces/default/pods?watch=true", "", "WATCH", "namespace"},
		{"GET", "/api/v1/watch/namespaces/default/pods", "", "WATCH", "namespace"},
		{"GET", "/api/v1/namespaces/default/pods?watch=false", "", "LIST", "namespace"},
		{"POST", "/api/v1/namespaces/default/pods", "", "POST", "resource"},
		{"PUT", "/api/v1/nodes/n/status", "", "PUT", "resource"},
		{"PATCH", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n", "application/merge-patch+json", "PATCH", "resource"},
		{"PATCH", "/api/v1/namespaces/default/pods/p", "application/apply-patch+yaml", "APPLY", "resource"},
		{"DELETE", "/api/v1/namespaces/n", "", "DELETE", "resource"},
		{"GET", "/api/v1", "", "GET", ""},
		{"GET", "/healthz", "", "GET", ""},
	} {
		req, _ := http.NewRequest(tc.method, tc.target, nil)
		req.Header.Set("Content-Type", tc.contentType)
		info := parseRequestInfo(req)
		if verb, scope := info.metricVerb(req), info.metricScope(); verb != tc.wantVerb || scope != tc.wantScope {
			t.Errorf("%s %s: got verb %q scope %q, want %q %q", tc.method, tc.target, verb, scope, tc.wantVerb, tc.wantScope)
		}
	}
}

func TestPathsAreSplitAsUpstreamDoes(t *testing.T) {
	for _, tc := range []struct {
		path                                  string
		group, namespace, resource, name, sub string
	}{
		{"/api/v1/namespaces", "", "", "namespaces", "", ""},
		{"/api/v1/namespaces/lab", "", "", "namespaces", "lab", ""},
		{"/api/v1/namespaces/lab/status", "", "", "namespaces", "lab", "status"},
		{"/api/v1/namespaces/lab/pods/p/status", "", "lab", "pods", "p", "status"},
		{"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", "coordination.k8s.io", "kube-node-lease", "leases", "", ""},
		{"/api/v1/nodes/n", "", "", "nodes", "n", ""},
	} {
		req, _ := http.NewRequest("GET", tc.path, nil)
		info := parseRequestInfo(req)
		if !info.isResource || info.gv.Group != tc.group || info.namespace != tc.namespace || info.resource != tc.resource || info.name != tc.name || info.subresource != tc.sub {
			t.Errorf("%s: got %+v", tc.path, info)
		}
		if _, ok := (&Server{resources: testResources}).lookupResource(info); !ok {
			t.Errorf("%s: no resource found", tc.path)
		}
	}
}

// Every request is counted in apiserver_request_total with upstream's
// labels, including failed ones and requests for unknown paths (which are
// not labelled with what they name).
func TestRequestsAreCountedWithUpstreamLabels(t *testing.T) {
	ts := startTestServer(t, newFakeStore())
	ts.do(t, "GET", "/api/v1/namespaces/metrics-test/configmaps", "")
	ts.do(t, "GET", "/api/v1/namespaces/metrics-test/configmaps/missing", "")
	ts.do(t, "GET", "/api/v1/namespaces/metrics-test/widgets", "")
	page := string(ts.do(t, "GET", "/metrics", "").body)
	for _, want := range []string{
		`apiserver_request_total{code="200",component="apiserver",group="",resource="configmaps",scope="namespace",subresource="",verb="LIST",version="v1"}`,
		`apiserver_request_total{code="404",component="apiserver",group="",resource="configmaps",scope="resource",subresource="",verb="GET",version="v1"}`,
		`apiserver_request_total{code="404",component="apiserver",group="",resource="",scope="namespace",subresource="",verb="LIST",version=""}`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestHandleServesExtraEndpointsAndTheirSubpaths(t *testing.T) {
	srv := startServing(t, testResources, newFakeStore(), func(s *Server) {
		s.Handle("/debug/example", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "example:"+r.URL.Path)
		}))
	}).http
	for path, want := range map[string]string{
		"/debug/example":     "example:/debug/example",
		"/debug/example/sub": "example:/debug/example/sub",
	} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != want {
			t.Errorf("GET %s = %q, want %q", path, body, want)
		}
	}
	resp, err := http.Get(srv.URL + "/debug/examples")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /debug/examples = %d, want 404 (only the path and its subpaths are served)", resp.StatusCode)
	}
}
