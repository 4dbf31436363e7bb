// Package framework starts the whole minicp stack in-process for end-to-end
// tests, the way net/http/httptest starts a server: free ports, a temporary
// data directory, no fsync, ready clients, and everything stopped by
// t.Cleanup.
//
//	func TestSomething(t *testing.T) {
//		s := framework.Start(t, framework.Options{})
//		pods := s.Clientset.CoreV1().Pods("default")
//		...
//	}
package framework

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minicp/controlplane"
	"minicp/internal/datadir"
	"minicp/internal/testsupport"
)

// Options adjust the stack a test starts. The zero value is a single embedded
// etcd member with protobuf storage, like `go run ./cmd/minicp`, but with no
// simulated nodes and no node lifecycle controller (cfg.Nodes turns them on).
type Options struct {
	// DataDir reuses a data directory, e.g. to restart on the same data;
	// empty means a fresh t.TempDir().
	DataDir string
	// Configure, if set, may change the configuration before start.
	Configure func(*controlplane.Config)
}

// Stack is a running control plane and clients for it.
type Stack struct {
	ControlPlane *controlplane.ControlPlane
	DataDir      string
	// RESTConfig reaches the apiserver with the admin token, as the
	// kubeconfig does; Clientset is built from it (JSON).
	RESTConfig *rest.Config
	Clientset  *kubernetes.Clientset
	// HTTP is a plain HTTP client that sends the admin token (and trusts
	// minicp's CA), for raw paths: /metrics, /debug/..., hand-made requests.
	HTTP *http.Client
	// URL is the apiserver's base URL.
	URL string
	// Etcd is a raw etcd client, for asserting what is stored.
	Etcd *clientv3.Client
	// Kubeconfig is the path of the kubeconfig minicp wrote.
	Kubeconfig string
}

// Start starts a control plane for t and registers its shutdown with
// t.Cleanup. It fails the test if the stack does not come up.
func Start(t testing.TB, opts Options) *Stack {
	t.Helper()
	cfg := controlplane.NewConfig()
	cfg.DataDir = opts.DataDir
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	cfg.Etcd.ClientPort, cfg.Etcd.PeerPort = 0, 0
	cfg.Etcd.UnsafeNoFsync = true
	// A 10 ms heartbeat makes etcd's first election, most of start-up, take
	// tens of milliseconds instead of about half a second.
	cfg.Etcd.TickMs, cfg.Etcd.ElectionMs = 10, 100
	cfg.APIServer.Port = 0
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	// No simulated nodes and no node lifecycle controller unless a test
	// asks for them: most tests count objects, keys or watchers.
	cfg.Nodes.Simulated = 0
	cfg.Nodes.LifecycleController = false
	if opts.Configure != nil {
		opts.Configure(&cfg)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cp, err := controlplane.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("starting minicp: %v", err)
	}
	s := &Stack{ControlPlane: cp, DataDir: cfg.DataDir, Kubeconfig: cp.KubeconfigPath(), Etcd: cp.EtcdClient()}
	t.Cleanup(func() { s.Stop(t) })

	s.URL = cp.URL()
	s.RESTConfig = cp.RESTConfig()
	s.RESTConfig.QPS = -1
	s.Clientset, err = kubernetes.NewForConfig(s.RESTConfig)
	if err != nil {
		t.Fatalf("building clientset: %v", err)
	}
	s.HTTP, err = rest.HTTPClientFor(s.RESTConfig)
	if err != nil {
		t.Fatalf("building the HTTP client: %v", err)
	}
	return s
}

// ProtobufClientset returns a clientset that speaks protobuf, as the
// kubelet and controllers do.
func (s *Stack) ProtobufClientset(t testing.TB) *kubernetes.Clientset {
	t.Helper()
	cfg := rest.CopyConfig(s.RESTConfig)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("building protobuf clientset: %v", err)
	}
	return cs
}

// Stop shuts the stack down; it is safe to call before t.Cleanup does.
func (s *Stack) Stop(t testing.TB) {
	t.Helper()
	if err := s.ControlPlane.Close(); err != nil {
		t.Errorf("stopping minicp: %v", err)
	}
}

// Context returns a context that ends with the test or after d.
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// StateTimeout is how long a test waits for a state whose timing it
// makes no claim about: an informer caught up, a resource served or
// collected, a leader elected. The wait ends as soon as the state holds,
// so the figure only says how long a loaded machine (CI runs the suite
// under the race detector on shared cores) may take before the test
// gives up. A wait whose timeout is a bound the test asserts names its
// own figure instead.
const StateTimeout = 30 * time.Second

// Eventually polls cond until it returns true or timeout passes, then
// fails the test with msg. It is how e2e tests wait: for a condition,
// never for a fixed time.
func Eventually(t testing.TB, timeout time.Duration, msg string, cond func() bool) {
	t.Helper()
	testsupport.Eventually(t, timeout, msg, cond)
}

// CopyCredentials copies the token and the PKI (CA and serving
// certificate) of the data directory from to the data directory to, so
// that a stack started on to accepts the clients of the one on from, as a
// cluster restored from a snapshot keeps its credentials.
func CopyCredentials(t testing.TB, from, to string) {
	t.Helper()
	files := []string{datadir.TokenFile}
	for _, f := range []string{controlplane.CACertFile, "ca.key", "apiserver.crt", "apiserver.key"} {
		files = append(files, filepath.Join(controlplane.PKIDir, f))
	}
	if err := os.MkdirAll(filepath.Join(to, controlplane.PKIDir), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(from, f))
		if err != nil {
			t.Fatalf("copying credentials: %v", err)
		}
		if err := os.WriteFile(filepath.Join(to, f), b, 0o600); err != nil {
			t.Fatalf("copying credentials: %v", err)
		}
	}
}
