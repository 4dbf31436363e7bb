package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/controlplane"
	"minicp/e2e/framework"
	"minicp/faults"
)

// Beyond --max-requests-inflight reads or --max-mutating-requests-inflight
// writes, the answer is 429 TooManyRequests with Retry-After, at once;
// reads and writes have their own budgets, and watches count against
// neither (upstream's rules).
func TestInflightLimitsAnswer429WithRetryAfterAndWatchesDoNotCount(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.APIServer.MaxRequestsInflight, c.APIServer.MaxMutatingRequestsInflight = 1, 1
		c.Triage.EnableDebugFaults = true
	}})
	ctx := framework.Context(t, time.Minute)
	// Two open watches hold nothing: a read still goes through.
	for range 2 {
		w, err := s.Clientset.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
	}
	if code, _ := getStatus(t, s.HTTP, s.URL+"/api/v1/namespaces/default"); code != http.StatusOK {
		t.Fatalf("a read beside two watches: got %d, want 200", code)
	}

	// A read waiting for a future resourceVersion holds the one read slot.
	holdSlot(t, s, func() *http.Request {
		req, _ := http.NewRequest("GET", s.URL+"/api/v1/namespaces/default/pods?resourceVersion=99999999&timeout=4s", nil)
		return req
	})
	expect429(t, s, func() *http.Request {
		req, _ := http.NewRequest("GET", s.URL+"/api/v1/namespaces", nil)
		return req
	})
	// ... and writes still go through: they have their own budget.
	if _, err := s.Clientset.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "while-reads-are-full"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("a write while the read slot is taken: %v", err)
	}

	// A write held 4 s in admission holds the one write slot.
	addFault(t, s, faults.Fault{Point: faults.Admission, Resource: "configmaps", Delay: faults.Duration(4 * time.Second)})
	holdSlot(t, s, func() *http.Request { return configMapPost(s, "held") })
	// The probes are pods, which the fault does not hold: each one that
	// gets the slot is done at once, so one soon finds it taken.
	probes := 0
	expect429(t, s, func() *http.Request {
		probes++
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"probe-%d"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`, probes)
		req, _ := http.NewRequest("POST", s.URL+"/api/v1/namespaces/default/pods", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		return req
	})
}

// holdSlot sends slow requests one after another until the test ends, so
// that one holds a slot even when a probe took it first and the slow one
// was refused.
func holdSlot(t *testing.T, s *framework.Stack, newReq func() *http.Request) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}) // closed when the goroutine below returns
	t.Cleanup(func() { cancel(); <-done })
	// This goroutine ends when the test's cleanup cancels ctx.
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if resp, err := s.HTTP.Do(newReq().WithContext(ctx)); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	}()
}

func configMapPost(s *framework.Stack, name string) *http.Request {
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q}}`, name)
	req, _ := http.NewRequest("POST", s.URL+"/api/v1/namespaces/default/configmaps", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return req
}

// expect429 sends requests until one is refused with 429, then checks the
// refusal: Retry-After: 1 and a TooManyRequests Status.
func expect429(t *testing.T, s *framework.Stack, newReq func() *http.Request) {
	t.Helper()
	var resp *http.Response
	var body []byte
	framework.Eventually(t, 20*time.Second, "a request refused with 429", func() bool {
		r, err := s.HTTP.Do(newReq())
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		body, _ = io.ReadAll(r.Body)
		resp = r
		return r.StatusCode == http.StatusTooManyRequests
	})
	var status metav1.Status
	if err := json.Unmarshal(body, &status); err != nil || status.Reason != metav1.StatusReasonTooManyRequests {
		t.Errorf("429 body: %s, want a TooManyRequests Status", body)
	}
	if got := resp.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After: got %q, want 1", got)
	}
}

// rawConn opens a plain TCP connection to the apiserver (plain HTTP is
// answered on loopback), for what a client library would hide.
func rawConn(t *testing.T, s *framework.Stack) (net.Conn, *bufio.Reader, string) {
	t.Helper()
	host := strings.TrimPrefix(s.ControlPlane.PlainURL(), "http://")
	conn, err := net.DialTimeout("tcp", host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, bufio.NewReader(conn), host
}

// waitClosed reads until the server closes the connection, and fails if it
// is still open after limit.
func waitClosed(t *testing.T, conn net.Conn, r *bufio.Reader, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	if err := conn.SetReadDeadline(start.Add(limit)); err != nil {
		t.Fatal(err)
	}
	_, err := io.Copy(io.Discard, r)
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		t.Fatalf("the connection is still open after %s", limit)
	}
	return time.Since(start)
}

// An idle keep-alive connection is closed after IdleTimeout, and one that
// never finishes its headers after ReadHeaderTimeout.
func TestIdleAndHeaderTimeoutsCloseConnections(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.APIServer.IdleTimeout, c.APIServer.ReadHeaderTimeout = 500*time.Millisecond, 500*time.Millisecond
	}})
	conn, r, host := rawConn(t, s)
	fmt.Fprintf(conn, "GET /version HTTP/1.1\r\nHost: %s\r\n\r\n", host)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("GET /version: %d close=%v, want 200 on a kept-alive connection", resp.StatusCode, resp.Close)
	}
	if idle := waitClosed(t, conn, r, 10*time.Second); idle < 400*time.Millisecond {
		t.Errorf("closed after %s idle, want about the 500ms idle timeout", idle)
	}

	conn, r, host = rawConn(t, s)
	fmt.Fprintf(conn, "GET /version HTTP/1.1\r\nHost: %s\r\n", host) // and no end of headers
	waitClosed(t, conn, r, 10*time.Second)
}

// A body that stops short of its Content-Length is answered within
// --request-timeout with a 504 Status, and the connection is closed: the
// client is not left waiting.
func TestStalledBodyGets504AndTheConnectionCloses(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) { c.APIServer.RequestTimeout = time.Second }})
	conn, r, host := rawConn(t, s)
	start := time.Now()
	fmt.Fprintf(conn, "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"apiVersion\":", host, s.ControlPlane.Token())
	if err := conn.SetReadDeadline(start.Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	took := time.Since(start)
	var status metav1.Status
	if resp.StatusCode != http.StatusGatewayTimeout || json.Unmarshal(body, &status) != nil || status.Reason != metav1.StatusReasonTimeout {
		t.Errorf("got %d %s, want 504 with a Timeout Status", resp.StatusCode, body)
	}
	if took < 900*time.Millisecond || took > 5*time.Second {
		t.Errorf("answered after %s, want about the 1s request timeout", took)
	}
	waitClosed(t, conn, r, 5*time.Second)
}

// A watch with a negative timeoutSeconds ends at once after its 200, as
// upstream's does (its watch timer fires at once for a negative duration).
func TestWatchWithNegativeTimeoutSecondsEndsAtOnce(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	c := clientWithToken(t, s, s.ControlPlane.Token())
	c.Timeout = 10 * time.Second
	start := time.Now()
	code, _ := getStatus(t, c, s.URL+"/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=-5")
	if code != http.StatusOK || time.Since(start) > 5*time.Second {
		t.Errorf("got %d after %s, want 200 and the stream ended at once", code, time.Since(start))
	}
}

// /readyz fails while the kubeconfig is missing: a script that waits for
// /readyz finds the kubeconfig and the token in place.
func TestReadyzFailsWhileTheKubeconfigIsMissing(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	c := clientWithToken(t, s, "")
	if code, _ := getStatus(t, c, s.URL+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz with the kubeconfig in place: %d, want 200", code)
	}
	kubeconfig, err := os.ReadFile(s.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(s.Kubeconfig); err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(s.URL + "/readyz?verbose")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "[-]kubeconfig failed") {
		t.Errorf("/readyz without the kubeconfig: %d %s, want 500 naming the kubeconfig check", resp.StatusCode, body)
	}
	if err := os.WriteFile(s.Kubeconfig, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _ := getStatus(t, c, s.URL+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz with the kubeconfig back: %d, want 200", code)
	}
}
