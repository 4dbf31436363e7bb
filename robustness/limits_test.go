//go:build linux

package robustness

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// No number of client connections makes minicp exit: with the descriptor
// limit at 1,024 (soft and hard), more connections than that are opened
// and held for longer than etcd's 30 s WAL purge interval (the purge that
// used to die with "too many open files"), while a client that was
// connected before keeps writing. Once the flood ends, new clients are
// served.
func TestAConnectionFloodDoesNotKillMinicp(t *testing.T) {
	const limit = 1024
	c := startChild(t, childOptions{NoFile: limit})
	cs := c.clientset()
	createNamespace(t, cs)
	cfg := c.restConfig()
	hc := httpClient(t, cfg)
	// The writer's connection exists before the flood.
	if status, code := send(t, hc, cfg.Host, "POST", "/configmaps", "application/json", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"before"}}`)); code != http.StatusCreated {
		t.Fatalf("write before the flood: %d %s", code, status.Message)
	}

	flood := pick(limit+200, 3*limit)
	conns := openIdleConnections(t, cfg, flood)
	hold := pick(35*time.Second, 95*time.Second)
	writes, failed := 0, 0
	deadline := time.Now().Add(hold)
	for i := 0; time.Now().Before(deadline); i++ {
		c.requireAlive(fmt.Sprintf("with %d connections open", len(conns)))
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"during-%d"}}`, i)
		if resp, _, err := trySend(hc, cfg.Host, "POST", "/configmaps", "application/json", []byte(body)); err == nil && resp.StatusCode == http.StatusCreated {
			writes++
		} else {
			failed++
		}
		wait(500 * time.Millisecond)
	}
	c.requireAlive(fmt.Sprintf("after holding %d connections for %s", len(conns), hold))
	for _, conn := range conns {
		conn.Close()
	}

	ctx := testContext(t, time.Minute)
	fresh := httpClient(t, c.restConfig())
	fresh.Transport = &http.Transport{TLSClientConfig: tlsConfig(t, cfg), DisableKeepAlives: true}
	if cfg.BearerToken != "" {
		fresh.Transport = bearer{cfg.BearerToken, fresh.Transport}
	}
	err := retry(ctx, func() error {
		resp, body, err := trySend(fresh, cfg.Host, "POST", "/configmaps", "application/json", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"after"}}`))
		if err == nil && resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusConflict {
			err = fmt.Errorf("HTTP %d: %s", resp.StatusCode, body)
		}
		return err
	})
	if err != nil {
		t.Fatalf("a new client after the flood: %v", err)
	}
	c.requireAlive("after the flood")
	t.Logf("robustness: flood nofile=%d connections=%d held=%s writes_during=%d failed_during=%d alive=true", limit, len(conns), hold, writes, failed)
}

// openIdleConnections opens n connections that each send one GET /version
// and then stay open and idle, as keep-alive clients do. Connections the
// server has not accepted yet wait in its accept queue: they count too.
func openIdleConnections(t *testing.T, cfg *rest.Config, n int) []net.Conn {
	t.Helper()
	u, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	var wg sync.WaitGroup
	sem := make(chan struct{}, 256) // dials in flight at once
	for range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() { // one dial; the connection is then left open
			defer wg.Done()
			defer func() { <-sem }()
			conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
			if err != nil {
				return
			}
			if u.Scheme == "https" {
				tc := tls.Client(conn, tlsConfig(t, cfg))
				tc.SetDeadline(time.Now().Add(2 * time.Second))
				if tc.Handshake() == nil {
					tc.SetDeadline(time.Time{})
					conn = tc
				}
			}
			fmt.Fprintf(conn, "GET /version HTTP/1.1\r\nHost: %s\r\n\r\n", u.Host)
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(conns) < n*9/10 {
		t.Fatalf("opened only %d of %d connections", len(conns), n)
	}
	return append([]net.Conn(nil), conns...)
}

// Beyond --max-requests-inflight reads and --max-mutating-requests-inflight
// writes, requests are answered at once with 429 TooManyRequests and a
// Retry-After header; reads and writes have limits of their own, and open
// watches take no slot.
func TestInflightLimitsAnswer429WithRetryAfter(t *testing.T) {
	// A user outside system:masters, whom the limits apply to.
	tokens := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(tokens, []byte("robustness-token,robustness-user,1001,robustness\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := startChild(t, childOptions{Flags: []string{
		"--max-requests-inflight=2", "--max-mutating-requests-inflight=1",
		"--watch-cache=false", "--enable-debug-faults", "--token-auth-file=" + tokens,
	}})
	cs := c.clientset()
	createNamespace(t, cs)
	admin := httpClient(t, c.restConfig())
	userCfg := rest.AnonymousClientConfig(c.restConfig())
	userCfg.BearerToken = "robustness-token"
	user := httpClient(t, userCfg)
	host := userCfg.Host

	// Three watches, open for the whole test: they must not take slots.
	for range 3 {
		resp, err := user.Get(host + "/api/v1/namespaces/" + testNamespace + "/configmaps?watch=1&timeoutSeconds=60")
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("opening a watch: %v %v", resp, err)
		}
		defer resp.Body.Close()
	}

	injectFault(t, admin, host, `{"point":"etcd.range","delay":"3s"}`)
	reads := concurrently(6, func(int) (*http.Response, []byte, error) {
		return trySend(user, host, "GET", "/configmaps", "", nil)
	})
	clearFaults(t, admin, host)
	injectFault(t, admin, host, `{"point":"etcd.txn","delay":"3s"}`)
	writes := concurrently(4, func(i int) (*http.Response, []byte, error) {
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"limited-%d"}}`, i)
		return trySend(user, host, "POST", "/configmaps", "application/json", []byte(body))
	})
	clearFaults(t, admin, host)

	for _, tc := range []struct {
		what    string
		answers []answer
		ok      int
		limit   int
	}{{"reads", reads, http.StatusOK, 2}, {"writes", writes, http.StatusCreated, 1}} {
		served, refused := 0, 0
		for _, a := range tc.answers {
			switch {
			case a.err != nil:
				t.Errorf("%s: %v", tc.what, a.err)
			case a.code == tc.ok:
				served++
			case a.code == http.StatusTooManyRequests:
				refused++
				checkTooMany(t, tc.what, a)
			default:
				t.Errorf("%s: HTTP %d %s, want %d or 429", tc.what, a.code, a.body, tc.ok)
			}
		}
		if served < 1 || served > tc.limit || refused < len(tc.answers)-tc.limit-1 {
			t.Errorf("%s: %d served and %d refused of %d at once, want at most %d served (the open watches take no slot) and the rest 429",
				tc.what, served, refused, len(tc.answers), tc.limit)
		}
		t.Logf("robustness: inflight %s=%d served=%d refused_429=%d", tc.what, len(tc.answers), served, refused)
	}
	c.requireAlive("after the in-flight limits")
}

// answer is one response's code, header and body, or the error.
type answer struct {
	code   int
	header http.Header
	body   []byte
	err    error
}

// concurrently runs n requests at once and returns their answers.
func concurrently(n int, do func(i int) (*http.Response, []byte, error)) []answer {
	out := make([]answer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { // one request
			defer wg.Done()
			resp, body, err := do(i)
			if err != nil {
				out[i] = answer{err: err}
				return
			}
			out[i] = answer{code: resp.StatusCode, header: resp.Header, body: body}
		}()
	}
	wg.Wait()
	return out
}

// checkTooMany checks a 429: a Status with reason TooManyRequests and a
// Retry-After header.
func checkTooMany(t *testing.T, what string, a answer) {
	t.Helper()
	var status metav1.Status
	if err := json.Unmarshal(a.body, &status); err != nil || status.Kind != "Status" || status.Code != http.StatusTooManyRequests || status.Reason != metav1.StatusReasonTooManyRequests || status.Message == "" {
		t.Errorf("%s: a 429 answered with %s, want a Status with code 429, reason TooManyRequests and a message", what, a.body)
	}
	if a.header.Get("Retry-After") == "" {
		t.Errorf("%s: a 429 without Retry-After", what)
	}
}

// A body that stops short of its Content-Length ends, within
// --request-timeout, with a Status and a closed connection, instead of
// holding the connection while the client waits.
func TestAStalledBodyEndsWithAStatusAndAClosedConnection(t *testing.T) {
	const timeout = 3 * time.Second
	c := startChild(t, childOptions{Flags: []string{fmt.Sprintf("--request-timeout=%s", timeout)}})
	createNamespace(t, c.clientset())
	cfg := c.restConfig()
	u, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if u.Scheme == "https" {
		conn = tls.Client(conn, tlsConfig(t, cfg))
	}
	auth := ""
	if cfg.BearerToken != "" {
		auth = "Authorization: Bearer " + cfg.BearerToken + "\r\n"
	}
	started := time.Now()
	fmt.Fprintf(conn, "POST /api/v1/namespaces/%s/configmaps HTTP/1.1\r\nHost: %s\r\n%sContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"apiVersion\":", testNamespace, u.Host, auth)
	conn.SetDeadline(started.Add(timeout + 10*time.Second))

	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body within %s: %v", timeout+10*time.Second, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	answered := time.Since(started)
	var status metav1.Status
	if err := json.Unmarshal(body, &status); err != nil || status.Kind != "Status" || int(status.Code) != resp.StatusCode || resp.StatusCode < 400 || status.Message == "" {
		t.Errorf("a stalled body answered HTTP %d %s, want a Status of that code (4xx or 5xx) with a message", resp.StatusCode, body)
	}
	if answered > timeout+5*time.Second {
		t.Errorf("answered after %s, want within --request-timeout (%s) and a little", answered, timeout)
	}
	// Then the server closes the connection: a read ends with EOF, not
	// with the deadline.
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after the answer the connection is still open (read: %v), want it closed", err)
	}
	c.requireAlive("after a stalled body")
	t.Logf("robustness: stalled_body answered=%s code=%d reason=%s closed=true", answered.Round(10*time.Millisecond), resp.StatusCode, status.Reason)
}

// trySend sends one request and returns the response (body read) or the
// transport error.
func trySend(hc *http.Client, host, method, path, contentType string, body []byte) (*http.Response, []byte, error) {
	if !strings.HasPrefix(path, "/api") && !strings.HasPrefix(path, "/debug") {
		path = "/api/v1/namespaces/" + testNamespace + path
	}
	req, err := http.NewRequest(method, host+path, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp, raw, err
}

func injectFault(t *testing.T, hc *http.Client, host, fault string) {
	t.Helper()
	resp, body, err := trySend(hc, host, "POST", "/debug/faults", "application/json", []byte(fault))
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("injecting %s: %v %s", fault, err, body)
	}
}

func clearFaults(t *testing.T, hc *http.Client, host string) {
	t.Helper()
	resp, body, err := trySend(hc, host, "DELETE", "/debug/faults", "application/json", nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("clearing faults: %v %s", err, body)
	}
}

// tlsConfig is the TLS configuration the kubeconfig describes (its CA).
// nil when the kubeconfig's server speaks plain HTTP.
func tlsConfig(t testing.TB, cfg *rest.Config) *tls.Config {
	tc, err := rest.TLSConfigFor(cfg)
	if err != nil {
		t.Fatalf("TLS configuration from the kubeconfig: %v", err)
	}
	if u, err := url.Parse(cfg.Host); err == nil && tc != nil && tc.ServerName == "" {
		tc.ServerName = u.Hostname()
	}
	return tc
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(req)
}
