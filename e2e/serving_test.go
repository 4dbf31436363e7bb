package e2e

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"minicp/controlplane"
	"minicp/e2e/framework"
)

// Off loopback minicp serves TLS only, with a serving certificate its own
// CA signed for the bind address; the kubeconfig carries that CA, and
// client-go and kubectl work with it as it is.
func TestOffLoopbackOnlyTLSIsServedAndTheKubeconfigCarriesTheCA(t *testing.T) {
	ip := nonLoopbackAddress(t)
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.APIServer.BindAddress = ip.String()
	}})
	u := serverURL(t, s)
	if u.Scheme != "https" || u.Hostname() != ip.String() {
		t.Errorf("apiserver URL: got %s, want https://%s:<port>", s.URL, ip)
	}
	if plain := s.ControlPlane.PlainURL(); plain != "" {
		t.Errorf("plain-HTTP URL: got %q, want none off loopback", plain)
	}
	checkPlainHTTPRefused(t, s)
	ca, err := os.ReadFile(filepath.Join(s.DataDir, controlplane.PKIDir, controlplane.CACertFile))
	if err != nil {
		t.Fatal(err)
	}
	checkKubeconfigWorks(t, s, ca)
}

// --tls-only refuses plain HTTP on loopback too; the kubeconfig, minicp's
// own clients and the live page's login link all use TLS.
func TestTLSOnlyOnLoopbackRefusesPlainHTTP(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.APIServer.TLSOnly = true
	}})
	u := serverURL(t, s)
	if u.Scheme != "https" || !net.ParseIP(u.Hostname()).IsLoopback() {
		t.Errorf("apiserver URL: got %s, want https on loopback", s.URL)
	}
	if plain := s.ControlPlane.PlainURL(); plain != "" {
		t.Errorf("plain-HTTP URL: got %q, want none with --tls-only", plain)
	}
	if login := s.ControlPlane.LoginURL(); !strings.HasPrefix(login, "https://") {
		t.Errorf("live page login link: got %s, want https", login)
	}
	checkPlainHTTPRefused(t, s)
	ca, err := os.ReadFile(filepath.Join(s.DataDir, controlplane.PKIDir, controlplane.CACertFile))
	if err != nil {
		t.Fatal(err)
	}
	checkKubeconfigWorks(t, s, ca)
}

// --tls-cert-file and --tls-private-key-file (upstream's names) are served
// as given, and minicp makes no PKI of its own. When the file ends with
// the chain's root, the kubeconfig carries that root as its CA; when it
// holds the serving certificate alone, the kubeconfig carries no CA and
// clients check the server against the system's roots.
func TestAGivenServingCertificateIsServedAndItsRootGoesInTheKubeconfig(t *testing.T) {
	for _, tc := range []struct {
		name     string
		withRoot bool
	}{
		{"chain ending with its root", true},
		{"serving certificate alone", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			caPEM, leafDER := writeServingPair(t, dir, tc.withRoot)
			s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
				c.APIServer.TLSCertFile = filepath.Join(dir, "serving.crt")
				c.APIServer.TLSPrivateKeyFile = filepath.Join(dir, "serving.key")
			}})
			if _, err := os.Stat(filepath.Join(s.DataDir, controlplane.PKIDir)); err == nil {
				t.Errorf("%s exists, want no PKI made when a certificate is given", controlplane.PKIDir)
			}
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM(caPEM)
			conn, err := tls.Dial("tcp", serverURL(t, s).Host, &tls.Config{RootCAs: pool, ServerName: "localhost"})
			if err != nil {
				t.Fatalf("TLS handshake trusting the test's CA: %v", err)
			}
			served := conn.ConnectionState().PeerCertificates[0].Raw
			conn.Close()
			if !bytes.Equal(served, leafDER) {
				t.Error("the server presents another certificate than --tls-cert-file's")
			}
			if tc.withRoot {
				checkKubeconfigWorks(t, s, caPEM)
				return
			}
			checkKubeconfigCA(t, s, nil)
			cs := clientsetFor(t, kubeconfigREST(t, s))
			if _, err := cs.CoreV1().Namespaces().Get(framework.Context(t, 30*time.Second), "default", metav1.GetOptions{}); err == nil || !strings.Contains(err.Error(), "x509") {
				t.Errorf("the kubeconfig without a CA, against a certificate of an unknown CA: got %v, want an x509 error", err)
			}
			cfg := kubeconfigREST(t, s)
			cfg.CAData = caPEM
			if _, err := clientsetFor(t, cfg).CoreV1().Namespaces().Get(framework.Context(t, 30*time.Second), "default", metav1.GetOptions{}); err != nil {
				t.Errorf("the kubeconfig with the CA added: %v", err)
			}
		})
	}
}

// nonLoopbackAddress is an IPv4 address of this machine that is not
// loopback, or skips the test when there is none.
func nonLoopbackAddress(t *testing.T) net.IP {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Skipf("cannot list this machine's addresses (%v): the off-loopback test needs one that is not loopback", err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
			return n.IP.To4()
		}
	}
	t.Skip("this machine has no IPv4 address but loopback: the off-loopback test needs one (see `ip addr`)")
	return nil
}

func serverURL(t *testing.T, s *framework.Stack) *url.URL {
	t.Helper()
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// checkPlainHTTPRefused sends plain-HTTP requests, with the admin token,
// to s, which serves TLS only: net/http's TLS server answers 400 and
// closes the connection, and nothing of the API is served.
func checkPlainHTTPRefused(t *testing.T, s *framework.Stack) {
	t.Helper()
	hostPort := serverURL(t, s).Host
	for _, path := range []string{"/version", "/api/v1/namespaces"} {
		req, err := http.NewRequest(http.MethodGet, "http://"+hostPort+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+s.ControlPlane.Token())
		c := &http.Client{Timeout: 30 * time.Second}
		resp, err := c.Do(req)
		if err != nil {
			t.Errorf("plain HTTP GET %s: %v, want net/http's 400 asking for HTTPS", path, err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "HTTPS") {
			t.Errorf("plain HTTP GET %s: got %d %q, want 400 asking for HTTPS", path, resp.StatusCode, body)
		}
	}
}

// checkKubeconfigWorks checks that the kubeconfig names the server, carries
// ca, and works as it is with client-go and (when installed) kubectl.
func checkKubeconfigWorks(t *testing.T, s *framework.Stack, ca []byte) {
	t.Helper()
	checkKubeconfigCA(t, s, ca)
	ctx := framework.Context(t, 30*time.Second)
	if _, err := clientsetFor(t, kubeconfigREST(t, s)).CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Errorf("client-go with the kubeconfig: %v", err)
	}
	cfg := kubeconfigREST(t, s)
	cfg.CAData = nil
	if _, err := clientsetFor(t, cfg).CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err == nil || !strings.Contains(err.Error(), "x509") {
		t.Errorf("client-go without the kubeconfig's CA: got %v, want an x509 error (the server is checked)", err)
	}
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Log("kubectl is not installed: the kubeconfig was checked with client-go only")
		return
	}
	if out := strings.TrimSpace(kubectl(t, s, "get", "namespace", "default", "-o", "name")); out != "namespace/default" {
		t.Errorf("kubectl get namespace default: got %q, want namespace/default", out)
	}
}

// checkKubeconfigCA checks the kubeconfig's server and CA.
func checkKubeconfigCA(t *testing.T, s *framework.Stack, ca []byte) {
	t.Helper()
	kc, err := clientcmd.LoadFromFile(s.Kubeconfig)
	if err != nil {
		t.Fatalf("reading the kubeconfig: %v", err)
	}
	cluster := kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster]
	if cluster.Server != s.URL {
		t.Errorf("kubeconfig server: got %s, want %s", cluster.Server, s.URL)
	}
	if !bytes.Equal(cluster.CertificateAuthorityData, ca) {
		t.Errorf("kubeconfig CA: got %q, want %q", cluster.CertificateAuthorityData, ca)
	}
}

func kubeconfigREST(t *testing.T, s *framework.Stack) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
	if err != nil {
		t.Fatalf("loading the kubeconfig: %v", err)
	}
	return cfg
}

func clientsetFor(t *testing.T, cfg *rest.Config) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// writeServingPair makes a CA and a serving certificate it signs for
// loopback and localhost, and writes serving.crt (followed by the CA's
// certificate when withRoot) and serving.key in dir. It returns the CA's
// PEM and the serving certificate's DER.
func writeServingPair(t *testing.T, dir string, withRoot bool) (caPEM, leafDER []byte) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "test-apiserver"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, DNSNames: []string{"localhost"},
	}
	leafDER, err = x509.CreateCertificate(rand.Reader, leafTmpl, caTmpl, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	certFile := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER})
	if withRoot {
		certFile = append(certFile, caPEM...)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "serving.crt"), certFile, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "serving.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return caPEM, leafDER
}
