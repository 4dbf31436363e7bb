package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"minicp/controlplane"
	"minicp/e2e/framework"
	"minicp/internal/datadir"
)

// clientWithToken is an HTTP client for s that trusts its CA and sends
// token ("" sends no credential at all).
func clientWithToken(t *testing.T, s *framework.Stack, token string) *http.Client {
	t.Helper()
	cfg := rest.CopyConfig(s.RESTConfig)
	cfg.BearerToken = token
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.Timeout = 30 * time.Second
	return c
}

// getStatus GETs path and returns the HTTP code and, when the body is a
// Status, its reason and message.
func getStatus(t *testing.T, c *http.Client, url string) (int, metav1.Status) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var status metav1.Status
	_ = json.Unmarshal(body, &status) // not every answer is a Status
	return resp.StatusCode, status
}

// A request without a valid credential is 401 Unauthorized, with a Status
// saying where the token is, except on the paths upstream leaves public.
func TestRequestsWithoutAValidTokenGet401ExceptPublicPaths(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	for name, c := range map[string]*http.Client{
		"no token":    clientWithToken(t, s, ""),
		"wrong token": clientWithToken(t, s, "not-the-token"),
	} {
		for _, path := range []string{"/api/v1/namespaces", "/api", "/metrics", "/debug/watchcache", "/debug/pprof/", "/ui/", "/openapi/v2"} {
			code, status := getStatus(t, c, s.URL+path)
			if code != http.StatusUnauthorized || status.Reason != metav1.StatusReasonUnauthorized || !strings.Contains(status.Message, "kubeconfig") {
				t.Errorf("%s, GET %s: got %d %q %q, want 401 Unauthorized naming the kubeconfig", name, path, code, status.Reason, status.Message)
			}
		}
		for _, path := range []string{"/healthz", "/livez", "/readyz", "/version"} {
			// Public paths need no credential, but a wrong one is still
			// refused, as upstream refuses it before looking at the path.
			want := http.StatusOK
			if name == "wrong token" {
				want = http.StatusUnauthorized
			}
			if code, _ := getStatus(t, c, s.URL+path); code != want {
				t.Errorf("%s, GET %s: got %d, want %d", name, path, code, want)
			}
		}
	}
	if code, _ := getStatus(t, s.HTTP, s.URL+"/api/v1/namespaces"); code != http.StatusOK {
		t.Errorf("with the token: got %d, want 200", code)
	}
}

// The token is made on first start in a 0600 file, kept across restarts,
// and the kubeconfig carries it with the CA of the serving certificate.
func TestTokenIsKeptAcrossRestartsAndTheKubeconfigCarriesIt(t *testing.T) {
	dir := t.TempDir()
	s := framework.Start(t, framework.Options{DataDir: dir})
	first := s.ControlPlane.Token()
	info, err := os.Stat(filepath.Join(dir, datadir.TokenFile))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", info.Mode().Perm())
	}
	s.Stop(t)

	s = framework.Start(t, framework.Options{DataDir: dir})
	if got := s.ControlPlane.Token(); got != first || len(first) < 40 {
		t.Errorf("token after restart %q, want the first one %q (and at least 40 characters)", got, first)
	}
	kc, err := clientcmd.LoadFromFile(s.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	user, cluster := kc.AuthInfos[kc.Contexts[kc.CurrentContext].AuthInfo], kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster]
	if user.Token != first || !strings.HasPrefix(cluster.Server, "https://") || len(cluster.CertificateAuthorityData) == 0 {
		t.Errorf("kubeconfig: token %q server %q CA %d bytes; want the token, an https server and the CA", user.Token, cluster.Server, len(cluster.CertificateAuthorityData))
	}
	// What kubectl does with it: an https client that checks the CA.
	rc, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(framework.Context(t, 10*time.Second), "default", metav1.GetOptions{}); err != nil {
		t.Errorf("a client built from the kubeconfig: %v", err)
	}
}

// --token-auth-file adds users and groups in upstream's format;
// SelfSubjectReview tells each who they are, and SelfSubjectAccessReview
// allows every authenticated user, saying why.
func TestTokenAuthFileUsersSeeThemselvesInWhoamiAndCanI(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens.csv")
	csv := "# token,user,uid,groups\nalice-token,alice,1001,\"dev,ops\"\nbob-token,bob,1002\n"
	if err := os.WriteFile(file, []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) { c.APIServer.TokenAuthFile = file }})
	ctx := framework.Context(t, 30*time.Second)
	for _, tc := range []struct {
		token, user string
		groups      []string
	}{
		{"alice-token", "alice", []string{"dev", "ops", "system:authenticated"}},
		{"bob-token", "bob", []string{"system:authenticated"}},
		{s.ControlPlane.Token(), controlplane.AdminUser.Name, []string{"minicp:admins", "system:authenticated"}},
	} {
		cfg := rest.CopyConfig(s.RESTConfig)
		cfg.BearerToken = tc.token
		cs := kubernetes.NewForConfigOrDie(cfg)
		review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: SelfSubjectReview: %v", tc.user, err)
		}
		if got := review.Status.UserInfo; got.Username != tc.user || strings.Join(got.Groups, ",") != strings.Join(tc.groups, ",") {
			t.Errorf("whoami as %s: got %s %v, want %s %v", tc.user, got.Username, got.Groups, tc.user, tc.groups)
		}
		access, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "delete", Resource: "pods", Namespace: "default"}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: SelfSubjectAccessReview: %v", tc.user, err)
		}
		if !access.Status.Allowed || !strings.Contains(access.Status.Reason, "every authenticated user") {
			t.Errorf("can-i as %s: got allowed=%v reason %q, want allowed, saying every authenticated user may", tc.user, access.Status.Allowed, access.Status.Reason)
		}
	}
}

// kubectl auth whoami and kubectl auth can-i work against minicp, through
// the kubeconfig minicp wrote.
func TestKubectlAuthWhoamiAndCanI(t *testing.T) {
	requireKubectl(t)
	s := framework.Start(t, framework.Options{})
	assertContains(t, "kubectl auth whoami", kubectl(t, s, "auth", "whoami"), "minicp-admin", "system:authenticated")
	if out := strings.TrimSpace(kubectl(t, s, "auth", "can-i", "create", "pods")); out != "yes" {
		t.Errorf("kubectl auth can-i create pods: got %q, want yes", out)
	}
	assertContains(t, "kubectl get --raw /metrics", kubectl(t, s, "get", "--raw", "/metrics"), "apiserver_request_total")
}
