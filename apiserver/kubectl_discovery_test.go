package apiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/apiserver/discovery"
	"minicp/apiserver/openapi"
)

// runKubectl runs the installed kubectl against url with a fresh cache
// directory, and returns its standard output and standard error.
func runKubectl(t *testing.T, url string, args ...string) (string, string) {
	t.Helper()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed")
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: minicp, cluster: {server: %q}}]
users: [{name: minicp, user: {}}]
contexts: [{name: minicp, context: {cluster: minicp, user: minicp}}]
current-context: minicp
`, url)
	if err := os.WriteFile(kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(kubectl, append([]string{"--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(dir, "cache")}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), stderr.String()
}

// newDocumentsServer serves discovery and OpenAPI as the apiserver does,
// without any REST resources behind them.
func newDocumentsServer(t *testing.T) *httptest.Server {
	t.Helper()
	discoveryHandler, openapiHandler := discovery.New(testResources, reviewDiscovery()), openapi.New(testResources)
	t.Cleanup(func() {
		testResources.Unsubscribe(discoveryHandler)
		testResources.Unsubscribe(openapiHandler)
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/openapi/") {
			openapiHandler.ServeHTTP(w, r)
			return
		}
		discoveryHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestKubectlListsEveryResourceWithoutWarnings(t *testing.T) {
	srv := newDocumentsServer(t)
	stdout, stderr := runKubectl(t, srv.URL, "api-resources")
	if stderr != "" {
		t.Errorf("kubectl api-resources warned: %s", stderr)
	}
	for _, r := range testResources.All() {
		if !strings.Contains(stdout, r.Name) || !strings.Contains(stdout, r.Kind) {
			t.Errorf("kubectl api-resources lacks %s (%s):\n%s", r.Name, r.Kind, stdout)
		}
	}
}

func TestKubectlExplainsFieldsFromTheOpenAPIDocuments(t *testing.T) {
	srv := newDocumentsServer(t)
	stdout, stderr := runKubectl(t, srv.URL, "explain", "leases.spec.holderIdentity")
	if stderr != "" {
		t.Errorf("kubectl explain warned: %s", stderr)
	}
	if !strings.Contains(stdout, "KIND:       Lease") || !strings.Contains(stdout, "holderIdentity <string>") {
		t.Errorf("kubectl explain leases.spec.holderIdentity:\n%s", stdout)
	}
}

// The review resources are served outside the table; discovery lists them
// so that kubectl auth whoami and can-i find them.
func TestDiscoveryListsTheReviewResources(t *testing.T) {
	srv := newDocumentsServer(t)
	for _, r := range reviews {
		resp := fetch(t, srv, http.MethodGet, "/apis/"+r.gvr.GroupVersion().String(), "")
		var list metav1.APIResourceList
		if err := json.Unmarshal(resp.body, &list); err != nil || resp.code != http.StatusOK {
			t.Fatalf("GET /apis/%s: %d %s (%v)", r.gvr.GroupVersion(), resp.code, resp.body, err)
		}
		found := false
		for _, got := range list.APIResources {
			found = found || (got.Name == r.gvr.Resource && got.Kind == r.kind && slices.Equal(got.Verbs, []string{"create"}))
		}
		if !found {
			t.Errorf("review %s: got %+v, want kind %s, verbs [create]", r.gvr, list.APIResources, r.kind)
		}
	}
}
