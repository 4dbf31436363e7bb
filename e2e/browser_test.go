package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/controlplane"
	"minicp/e2e/framework"
)

// What a web page in the user's browser could send, refused before any
// handler runs, and etcd left as it was: DNS rebinding (a foreign Host),
// a write from another origin, and writes in the types a page may send
// to any server unasked (text/plain, forms, no body).
func TestBrowserAttacksAreRefusedAndChangeNothing(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) { c.Triage.EnableDebugFaults = true }})
	const cm = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"from-a-page"}}`
	cases := []struct {
		name, method, path, body string
		headers                  map[string]string
		wantCode                 int
		wantReason               metav1.StatusReason
	}{
		{"a foreign Host (DNS rebinding) is 400", "GET", "/api/v1/namespaces", "", map[string]string{"Host": "evil.example"}, 400, metav1.StatusReasonBadRequest},
		{"a foreign Host with the port is 400", "GET", "/api/v1/namespaces", "", map[string]string{"Host": "evil.example:8080"}, 400, metav1.StatusReasonBadRequest},
		{"a write from another origin is 403", "POST", "/api/v1/namespaces/default/configmaps", cm,
			map[string]string{"Origin": "http://evil.example", "Content-Type": "application/json"}, 403, metav1.StatusReasonForbidden},
		{"a write from an opaque origin is 403", "POST", "/api/v1/namespaces/default/configmaps", cm,
			map[string]string{"Origin": "null", "Content-Type": "application/json"}, 403, metav1.StatusReasonForbidden},
		{"a write without Content-Type is 415", "POST", "/api/v1/namespaces/default/configmaps", cm, nil, 415, metav1.StatusReasonUnsupportedMediaType},
		{"a text/plain write is 415", "POST", "/api/v1/namespaces/default/configmaps", cm, map[string]string{"Content-Type": "text/plain"}, 415, metav1.StatusReasonUnsupportedMediaType},
		{"a form write is 415", "PUT", "/api/v1/namespaces/default/configmaps/x", "a=b", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, metav1.StatusReasonUnsupportedMediaType},
		{"a text/plain fault injection is 415", "POST", "/debug/faults", `{"point":"etcd.txn","error":"boom"}`, map[string]string{"Content-Type": "text/plain"}, 415, metav1.StatusReasonUnsupportedMediaType},
		{"a body-less POST to the debug endpoints is 415", "POST", "/debug/watchcache/configmaps/pause", "", nil, 415, metav1.StatusReasonUnsupportedMediaType},
		{"a body-less POST from another origin is 403", "POST", "/debug/faults/members/default/stop", "", map[string]string{"Origin": "http://evil.example"}, 403, metav1.StatusReasonForbidden},
	}
	// The cases are sent as a page would: without the Authorization header
	// (a page cannot add one to another site's request unasked). Only such
	// a header lets a write go without a Content-Type (kubectl create --raw).
	noToken := clientWithToken(t, s, "")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := currentRevision(t, s)
			req, err := http.NewRequest(tc.method, s.URL+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			if host := tc.headers["Host"]; host != "" {
				req.Host = host
			}
			status, code := decodeStatus(t, noToken, req)
			if code != tc.wantCode || status.Reason != tc.wantReason || status.Message == "" {
				t.Errorf("got %d %q %q, want %d %q with a message", code, status.Reason, status.Message, tc.wantCode, tc.wantReason)
			}
			if after := currentRevision(t, s); after != before {
				t.Errorf("etcd revision moved %d -> %d: a refused request wrote", before, after)
			}
		})
	}

	// With the bearer token a write may omit its Content-Type, as kubectl
	// create --raw does.
	req, _ := http.NewRequest("POST", s.URL+"/debug/watchcache/configmaps/pause", nil)
	if status, code := decodeStatus(t, s.HTTP, req); code != http.StatusOK {
		t.Errorf("a body-less POST with the token: got %d %q, want 200", code, status.Message)
	}

	// What is allowed: loopback names, and a write from the server's own origin.
	for _, host := range []string{"localhost", strings.TrimPrefix(s.URL, "https://")} {
		req, _ := http.NewRequest("GET", s.URL+"/api/v1/namespaces", nil)
		req.Host = host
		if _, code := decodeStatus(t, s.HTTP, req); code != http.StatusOK {
			t.Errorf("Host %s: got %d, want 200", host, code)
		}
	}
	req, _ = http.NewRequest("POST", s.URL+"/api/v1/namespaces/default/configmaps", strings.NewReader(cm))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", s.URL)
	if status, code := decodeStatus(t, s.HTTP, req); code != http.StatusCreated {
		t.Errorf("a same-origin write: got %d %s, want 201", code, status.Message)
	}
}

// decodeStatus sends req and decodes a Status from the answer, if any.
func decodeStatus(t *testing.T, c *http.Client, req *http.Request) (metav1.Status, int) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var status metav1.Status
	if resp.StatusCode >= 300 {
		if err := json.Unmarshal(body, &status); err != nil || status.Kind != "Status" {
			t.Errorf("%s %s: %d answer is not a Status: %s", req.Method, req.URL.Path, resp.StatusCode, body)
		}
	}
	return status, resp.StatusCode
}

// The live page's login URL works once: it sets an HttpOnly, SameSite=Strict
// cookie and redirects to /ui/; the cookie then reads the page's views, but
// never writes.
func TestLoginURLSetsASessionCookieThatOnlyReads(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	login := s.ControlPlane.LoginURL()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := browser.Get(login)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookies := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/" || len(cookies) != 1 {
		t.Fatalf("login: got %d Location %q cookies %v, want 303 to /ui/ with one cookie", resp.StatusCode, resp.Header.Get("Location"), cookies)
	}
	if c := cookies[0]; !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
		t.Errorf("cookie %v: want HttpOnly and SameSite=Strict", c)
	}
	base := strings.SplitN(login, "/ui/", 2)[0] // the page's own origin
	for _, path := range []string{"/ui/", "/debug/watchcache", "/debug/etcd"} {
		if resp, err := browser.Get(base + path); err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s with the cookie: %v %v, want 200", path, err, resp)
		} else {
			resp.Body.Close()
		}
	}
	req, _ := http.NewRequest("POST", base+"/api/v1/namespaces/default/configmaps", strings.NewReader(`{"metadata":{"name":"x"}}`))
	req.Header.Set("Content-Type", "application/json")
	if status, code := decodeStatus(t, browser, req); code != http.StatusUnauthorized {
		t.Errorf("a write with only the cookie: got %d %s, want 401", code, status.Message)
	}
	// The login token was used: a second visit is refused.
	fresh := &http.Client{Timeout: 30 * time.Second, CheckRedirect: browser.CheckRedirect}
	req, _ = http.NewRequest("GET", login, nil)
	if status, code := decodeStatus(t, fresh, req); code != http.StatusUnauthorized || !strings.Contains(status.Message, "used already") {
		t.Errorf("second use of the login URL: got %d %q, want 401 saying it was used", code, status.Message)
	}
}
