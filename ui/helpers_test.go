package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"

	"minicp/embedetcd"
	"minicp/internal/testetcd"
	"minicp/kinds"
	"minicp/lease"
	"minicp/registry"
	"minicp/watchcache"
)

// stack is an embedded etcd, a Store binding Node Lease keys to etcd
// leases (as minicp does by default), a watch cache, and the views on a
// fake clock, served by an httptest server with the apiserver's routing
// rule (a path and everything below it).
type stack struct {
	t       testing.TB
	ctx     context.Context
	cluster *embedetcd.Cluster
	store   *registry.Store
	cache   *watchcache.Cache
	clock   *clocktesting.FakePassiveClock
	views   *Views
	url     string
}

func startStack(t testing.TB, configure ...func(*Config)) *stack {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	var ecfg embedetcd.Config // as started, for the views' Config
	cluster := testetcd.Start(t, func(c *embedetcd.Config) { ecfg = *c })
	store, err := registry.NewStore(cluster.Client(), testResources, registry.Options{KeyTTL: nodeLeaseTTL})
	if err != nil {
		t.Fatal(err)
	}
	cache, err := watchcache.New(store, testResources, watchcache.NewConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cache.Close) // before etcd's Close: cleanups run last-in first-out
	if err := cache.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	s := &stack{t: t, ctx: ctx, cluster: cluster, store: store, cache: cache, clock: clocktesting.NewFakePassiveClock(time.Now().Truncate(time.Second))}
	cfg := Config{Resources: testResources, Store: cache, Cache: cache, EtcdClient: cluster.Client(), Cluster: cluster, Etcd: ecfg, GracePeriod: 50 * time.Second, Clock: s.clock}
	for _, f := range configure {
		f(&cfg)
	}
	s.views = New(cfg)
	mux := &prefixMux{}
	s.views.Register(mux)
	s.url = httptestServer(t, mux)
	return s
}

// httptestServer serves h until the test ends and returns its URL.
func httptestServer(t testing.TB, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// nodeLeaseTTL binds Leases in kube-node-lease for leaseDurationSeconds,
// as controlplane's --node-lease-etcd-binding does.
func nodeLeaseTTL(_ *registry.Resource, obj runtime.Object) time.Duration {
	l, ok := obj.(*coordinationv1.Lease)
	if !ok || l.Namespace != lease.NodeLeaseNamespace || l.Spec.LeaseDurationSeconds == nil {
		return 0
	}
	return time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
}

// prefixMux routes as apiserver.Server.Handle does: a handler serves its
// path and everything below it.
type prefixMux struct {
	// mu guards routes; Register writes them before the server starts.
	mu     sync.Mutex
	routes map[string]http.Handler
}

func (m *prefixMux) Handle(path string, h http.Handler) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.routes == nil {
		m.routes = map[string]http.Handler{}
	}
	m.routes[path] = h
}

func (m *prefixMux) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for root, h := range m.routes {
		if req.URL.Path == root || len(req.URL.Path) > len(root) && req.URL.Path[:len(root)+1] == root+"/" {
			h.ServeHTTP(w, req)
			return
		}
	}
	http.NotFound(w, req)
}

// node creates a node whose Ready condition has status ready and, unless
// silent < 0, its Lease last renewed silent before the stack's clock.
func (s *stack) node(name string, ready corev1.ConditionStatus, silent time.Duration) {
	s.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: ready, Reason: "KubeletReady", LastTransitionTime: metav1.NewTime(s.clock.Now()),
	}}}}
	if _, err := s.store.Create(s.ctx, nodesRes, "", n, registry.WriteOptions{}); err != nil {
		s.t.Fatalf("creating node %s: %v", name, err)
	}
	if silent < 0 {
		return
	}
	duration := int32(40)
	renew := metav1.NewMicroTime(s.clock.Now().Add(-silent))
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: lease.NodeLeaseNamespace},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &name, LeaseDurationSeconds: &duration, RenewTime: &renew},
	}
	if _, err := s.store.Create(s.ctx, leasesRes, lease.NodeLeaseNamespace, l, registry.WriteOptions{}); err != nil {
		s.t.Fatalf("creating lease %s: %v", name, err)
	}
}

// get fetches path and decodes its JSON into out; it returns the status code.
func (s *stack) get(path string, out any) int {
	s.t.Helper()
	resp, err := http.Get(s.url + path)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			s.t.Fatalf("GET %s: decoding %d answer: %v", path, resp.StatusCode, err)
		}
	}
	return resp.StatusCode
}

// waitCached waits until the cache has every node and lease written so far.
func (s *stack) waitCached() {
	s.t.Helper()
	for _, res := range []*registry.Resource{nodesRes, leasesRes} {
		if _, err := s.cache.List(s.ctx, res, "", registry.ListOptions{}); err != nil { // a consistent list waits for the cache
			s.t.Fatal(err)
		}
	}
}

func nodeName(i int) string { return fmt.Sprintf("node-%04d", i) }

// testResources is the table the package's tests serve.
var testResources = kinds.NewTable()

var (
	nodesRes, _  = testResources.Lookup(corev1.SchemeGroupVersion.WithResource("nodes"))
	leasesRes, _ = testResources.Lookup(coordinationv1.SchemeGroupVersion.WithResource("leases"))
)
