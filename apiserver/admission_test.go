package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/apiserver/admission"
	"minicp/registry"
)

// startAdmissionServer serves an etcd-backed store with the default
// namespace, configure applied to the Config and setup to the Server
// before it serves anything.
func startAdmissionServer(t *testing.T, configure func(*Config), setup func(*Server)) *testServer {
	t.Helper()
	var configures []func(*Config)
	if configure != nil {
		configures = append(configures, configure)
	}
	store, _ := newEtcdStore(t, testResources, registry.Options{})
	ts := startServing(t, testResources, store, setup, configures...)
	ts.createDefaultNamespace(t)
	return ts
}

const configMapBody = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s"}}`

func TestCreateInAMissingNamespaceIsNotFound(t *testing.T) {
	ts := startAdmissionServer(t, nil, nil)
	resp := ts.do(t, "POST", "/api/v1/namespaces/foo/configmaps", fmt.Sprintf(configMapBody, "c"), "Content-Type: application/json")
	st := resp.status(t)
	if resp.code != http.StatusNotFound || st.Message != `namespaces "foo" not found` {
		t.Fatalf("got %d %q, want 404 namespaces \"foo\" not found", resp.code, st.Message)
	}
	if got := ts.do(t, "GET", "/api/v1/namespaces/foo/configmaps/c", ""); got.code != http.StatusNotFound {
		t.Errorf("the config map was stored in a missing namespace: %d %s", got.code, got.body)
	}
}

// Deleting a namespace turns it Terminating; nothing new may be created in
// it, as upstream's NamespaceLifecycle answers.
func TestCreateInATerminatingNamespaceIsForbiddenWithItsCause(t *testing.T) {
	ts := startAdmissionServer(t, nil, nil)
	ctx := testContext(t)
	cs := ts.clientset(t)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "lab"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, "lab", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, "lab", metav1.GetOptions{})
	if err != nil || ns.Status.Phase != corev1.NamespaceTerminating || ns.DeletionTimestamp == nil {
		t.Fatalf("after DELETE: %+v %v, want the namespace Terminating", ns, err)
	}
	resp := ts.do(t, "POST", "/api/v1/namespaces/lab/configmaps", fmt.Sprintf(configMapBody, "late"), "Content-Type: application/json")
	st := resp.status(t)
	want := `configmaps "late" is forbidden: unable to create new content in namespace lab because it is being terminated`
	if resp.code != http.StatusForbidden || st.Message != want {
		t.Fatalf("got %d %q, want 403 %q", resp.code, st.Message, want)
	}
	if st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Type != corev1.NamespaceTerminatingCause {
		t.Errorf("causes: got %+v, want one NamespaceTerminating cause", st.Details)
	}
}

func TestTheDefaultNamespacesMayNotBeDeleted(t *testing.T) {
	ts := startAdmissionServer(t, nil, nil)
	resp := ts.do(t, "DELETE", "/api/v1/namespaces/default", "")
	st := resp.status(t)
	if resp.code != http.StatusForbidden || st.Message != `namespaces "default" is forbidden: this namespace may not be deleted` {
		t.Fatalf("got %d %q, want 403 this namespace may not be deleted", resp.code, st.Message)
	}
}

func TestFinalizeIsReplacedNeverReadAndDeletesAFinishedNamespace(t *testing.T) {
	ts := startAdmissionServer(t, nil, nil)
	ctx := testContext(t)
	cs := ts.clientset(t)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "lab"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if resp := ts.do(t, "GET", "/api/v1/namespaces/lab/finalize", ""); resp.code != http.StatusMethodNotAllowed || resp.header.Get("Allow") != "PUT" {
		t.Errorf("GET finalize: got %d Allow %q, want 405 Allow PUT", resp.code, resp.header.Get("Allow"))
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, "lab", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, "lab", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns.Spec.Finalizers = nil
	if _, err := cs.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("finalize: %v", err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "lab", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after finalize: got %v, want 404", err)
	}
}

// recordingPlugin records what it admits and rejects what reject says.
type recordingPlugin struct {
	name   string
	reject func(*admission.Attributes) error
	mu     sync.Mutex // guards seen
	seen   []string
}

func (p *recordingPlugin) Name() string { return p.name }

func (p *recordingPlugin) Admit(_ context.Context, a *admission.Attributes) error {
	p.mu.Lock()
	p.seen = append(p.seen, fmt.Sprintf("%s %s %s/%s", a.Operation, a.Resource.Name, a.Namespace, a.Name))
	p.mu.Unlock()
	if p.reject != nil {
		return p.reject(a)
	}
	return nil
}

// operations returns what the plugin admitted on resource.
func (p *recordingPlugin) operations(resource string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, op := range p.seen {
		if strings.Contains(op, " "+resource+" ") {
			out = append(out, op)
		}
	}
	return out
}

func TestPluginsRunInOrderAndTheFirstRejectionEndsTheChain(t *testing.T) {
	first := &recordingPlugin{name: "First", reject: func(a *admission.Attributes) error {
		if a.Name == "forbidden" {
			return apierrors.NewForbidden(a.Resource.GroupVersionResource().GroupResource(), a.Name, errors.New("not this one"))
		}
		return nil
	}}
	second := &recordingPlugin{name: "Second"}
	ts := startAdmissionServer(t, nil, func(s *Server) { s.AddAdmissionPlugin(first); s.AddAdmissionPlugin(second) })

	resp := ts.do(t, "POST", "/api/v1/namespaces/default/configmaps", fmt.Sprintf(configMapBody, "forbidden"), "Content-Type: application/json")
	if resp.code != http.StatusForbidden {
		t.Fatalf("rejected create: got %d %s, want 403", resp.code, resp.body)
	}
	if got := ts.do(t, "GET", "/api/v1/namespaces/default/configmaps/forbidden", ""); got.code != http.StatusNotFound {
		t.Errorf("a rejected create was stored: %d", got.code)
	}
	if got := second.operations("configmaps"); len(got) != 0 {
		t.Errorf("the second plugin ran after a rejection: %v", got)
	}

	// A PUT that creates is admitted as CREATE, one that replaces as UPDATE;
	// DELETE is admitted by name.
	lease := `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"n1"}}`
	for i := 0; i < 2; i++ {
		if resp := ts.do(t, "PUT", "/apis/coordination.k8s.io/v1/namespaces/default/leases/n1", lease, "Content-Type: application/json"); resp.code >= 300 {
			t.Fatalf("PUT lease: %d %s", resp.code, resp.body)
		}
	}
	if resp := ts.do(t, "DELETE", "/apis/coordination.k8s.io/v1/namespaces/default/leases/n1", ""); resp.code != http.StatusOK {
		t.Fatalf("DELETE lease: %d %s", resp.code, resp.body)
	}
	// An update is admitted on every attempt of the store's read-modify-write
	// loop (the store may decide a no-op again on a fresh read): repeats of
	// the same admission in a row are one request.
	want := []string{"CREATE leases default/n1", "UPDATE leases default/n1", "DELETE leases default/n1"}
	if got := slices.Compact(second.operations("leases")); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("admitted: got %v, want %v", got, want)
	}
}
