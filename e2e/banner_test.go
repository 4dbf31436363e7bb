package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"minicp/controlplane"
	"minicp/e2e/framework"
	"minicp/internal/testsupport"
)

// The banner's live-page link and the page it says the link opens are on
// the same scheme, host and port (the session cookie is good there only),
// and following the link does land there, logged in: plain HTTP on
// loopback, https with --tls-only.
func TestBannerLinksTheLivePageWhereTheLoginLinkLeads(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tlsOnly bool
		scheme  string
	}{
		{"loopback", false, "http"},
		{"tls-only", true, "https"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := controlplane.NewConfig()
			cfg.DataDir = t.TempDir()
			cfg.Etcd.ClientPort, cfg.Etcd.PeerPort, cfg.APIServer.Port = 0, 0, 0
			cfg.Etcd.UnsafeNoFsync = true
			cfg.Nodes.Simulated, cfg.Nodes.LifecycleController = 0, false
			cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			cfg.APIServer.TLSOnly = tc.tlsOnly

			ctx, cancel := context.WithCancel(context.Background())
			var out testsupport.SyncBuffer
			done := make(chan error, 1) // Run's result, once ctx is cancelled
			go func() { done <- controlplane.Run(ctx, cfg, &out) }()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("Run: %v", err)
				}
			}()
			framework.Eventually(t, framework.StateTimeout, "the banner", func() bool { return strings.Contains(out.String(), "Press Ctrl-C") })

			banner := out.String()
			login := regexp.MustCompile(`live page: (\S+)`).FindStringSubmatch(banner)
			home := regexp.MustCompile(`opens (\S+)\)`).FindStringSubmatch(banner)
			if login == nil || home == nil {
				t.Fatalf("the banner names no live page link and page:\n%s", banner)
			}
			loginURL, err := url.Parse(login[1])
			if err != nil {
				t.Fatal(err)
			}
			want := tc.scheme + "://" + loginURL.Host + "/ui/"
			if loginURL.Scheme != tc.scheme || home[1] != want {
				t.Errorf("banner: link %s opens %s, want a %s link that opens %s", login[1], home[1], tc.scheme, want)
			}

			c := browserFor(t, cfg.DataDir)
			resp, err := c.Get(login[1])
			if err != nil {
				t.Fatalf("following the login link: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Request.URL.String() != home[1] {
				t.Errorf("following the login link: got %d at %s, want 200 at %s", resp.StatusCode, resp.Request.URL, home[1])
			}
		})
	}
}

// browserFor is an HTTP client with a cookie jar that trusts the CA in
// dataDir's pki, as a browser would once told to.
func browserFor(t *testing.T, dataDir string) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(filepath.Join(dataDir, controlplane.PKIDir, controlplane.CACertFile))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	return &http.Client{
		Jar:       jar,
		Timeout:   30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
}
