package apiserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"minicp/apiserver/filters"
)

// loginServer is a server that knows one bearer token, adminToken, and
// lets no anonymous request through, with the login's clock in the
// test's hands.
func loginServer(t *testing.T) (*testServer, *clocktesting.FakePassiveClock) {
	t.Helper()
	clock := clocktesting.NewFakePassiveClock(time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC))
	ts := startServing(t, testResources, newFakeStore(), func(s *Server) { s.login.clock = clock }, func(c *Config) {
		c.AnonymousAuth = false
		c.Tokens = map[string]filters.UserInfo{adminToken: {Name: "admin", Groups: []string{filters.GroupMasters}}}
	})
	return ts, clock
}

const adminToken = "admin-token"

// browserDo sends one request as a browser would (no redirect followed),
// with the session cookie if not empty; headers are "Name: value".
func browserDo(t *testing.T, ts *testServer, method, path, cookie string, headers ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, ts.http.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: SessionCookie, Value: cookie})
	}
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ": ")
		req.Header.Set(name, value)
	}
	client := *ts.http.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// newLink asks for a login link with the bearer token and returns its
// path and query, as the test server serves it.
func newLink(t *testing.T, ts *testServer) string {
	t.Helper()
	resp := browserDo(t, ts, http.MethodPost, loginPath, "", "Authorization: Bearer "+adminToken)
	var link LoginLink
	if err := json.NewDecoder(resp.Body).Decode(&link); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s with the token: got %d (%v), want 200 and a link", loginPath, resp.StatusCode, err)
	}
	if link.SessionSeconds != int64(SessionLifetime/time.Second) {
		t.Errorf("the link's session lasts %d s, want %d", link.SessionSeconds, int64(SessionLifetime/time.Second))
	}
	u, err := url.Parse(link.URL)
	if err != nil || u.Path != loginPath || u.Query().Get("token") == "" {
		t.Fatalf("link %q: want a %s URL with a token (%v)", link.URL, loginPath, err)
	}
	return u.RequestURI()
}

// login follows link and returns the session cookie it sets.
func login(t *testing.T, ts *testServer, link string) *http.Cookie {
	t.Helper()
	resp := browserDo(t, ts, http.MethodGet, link, "")
	cookies := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != uiHome || len(cookies) != 1 {
		t.Fatalf("GET %s: got %d to %q with cookies %v, want 303 to %s with the session cookie", link, resp.StatusCode, resp.Header.Get("Location"), cookies, uiHome)
	}
	return cookies[0]
}

// A new link is given for the bearer token and nothing else: not for the
// session cookie (a page the browser shows could send it), not without a
// credential, not for a token that is not valid. Each link logs in once.
func TestALoginLinkIsGivenForTheBearerTokenOnly(t *testing.T) {
	ts, _ := loginServer(t)
	cookie := login(t, ts, newLink(t, ts))
	second := newLink(t, ts)
	if got := login(t, ts, second); got.Value == cookie.Value {
		t.Errorf("two links opened the same session %q", got.Value)
	}
	for _, tc := range []struct {
		name, cookie string
		headers      []string
	}{
		{"the session cookie", cookie.Value, nil},
		{"no credential", "", nil},
		{"a token that is not valid", "", []string{"Authorization: Bearer not-" + adminToken}},
	} {
		// As the page's own scripts could send it: a JSON POST from its
		// origin, which the checks against other sites' pages let through.
		resp := browserDo(t, ts, http.MethodPost, loginPath, tc.cookie, append(tc.headers, "Content-Type: application/json")...)
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(raw), `"kind":"Status"`) {
			t.Errorf("POST %s with %s: got %d %s, want a 401 Status", loginPath, tc.name, resp.StatusCode, raw)
		}
	}
	if resp := browserDo(t, ts, http.MethodPut, loginPath, "", "Authorization: Bearer "+adminToken); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("PUT %s: got %d, want 405", loginPath, resp.StatusCode)
	}
}

// A used link opened again by a browser that is logged in leads to the
// page; without a session, a browser reads a page that says how to get a
// new link, and an API client gets the Status it always got.
func TestAUsedLinkLeadsALoggedInBrowserToThePage(t *testing.T) {
	ts, _ := loginServer(t)
	link := newLink(t, ts)
	cookie := login(t, ts, link)

	resp := browserDo(t, ts, http.MethodGet, link, cookie.Value, "Accept: text/html")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != uiHome || len(resp.Cookies()) != 0 {
		t.Errorf("a used link with a valid session: got %d to %q, cookies %v; want 303 to %s and no new cookie", resp.StatusCode, resp.Header.Get("Location"), resp.Cookies(), uiHome)
	}

	resp = browserDo(t, ts, http.MethodGet, link, "", "Accept: text/html,application/xhtml+xml,*/*;q=0.8")
	page, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(string(page), "<code>minictl ui</code>") || !strings.Contains(string(page), "used already") {
		t.Errorf("a used link in a browser without a session: got %d %q:\n%s\nwant a 401 HTML page naming minictl ui", resp.StatusCode, resp.Header.Get("Content-Type"), page)
	}

	resp = browserDo(t, ts, http.MethodGet, link, "")
	raw, _ := io.ReadAll(resp.Body)
	var status struct{ Kind, Message string }
	if err := json.Unmarshal(raw, &status); err != nil || resp.StatusCode != http.StatusUnauthorized || status.Kind != "Status" || !strings.Contains(status.Message, "minictl ui") {
		t.Errorf("a used link for an API client: got %d %s, want a 401 Status naming minictl ui", resp.StatusCode, raw)
	}
}

// The session cookie is persistent (Max-Age and Expires: a browser keeps
// it across a restart), HttpOnly and SameSite=Strict; the session ends
// at its expiry, when /ui/ shows a browser the page saying how to log in.
func TestTheSessionOutlivesTheBrowserUntilItExpires(t *testing.T) {
	ts, clock := loginServer(t)
	start := clock.Now()
	cookie := login(t, ts, newLink(t, ts))
	if cookie.MaxAge != int(SessionLifetime/time.Second) || !cookie.Expires.Equal(start.Add(SessionLifetime).Truncate(time.Second)) {
		t.Errorf("cookie Max-Age %d, Expires %v; want %d and %v", cookie.MaxAge, cookie.Expires, int(SessionLifetime/time.Second), start.Add(SessionLifetime))
	}
	if !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Errorf("cookie %v: want HttpOnly and SameSite=Strict", cookie)
	}

	clock.SetTime(start.Add(SessionLifetime - time.Second))
	if resp := browserDo(t, ts, http.MethodGet, "/api", cookie.Value); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /api a second before the session expires: got %d, want 200", resp.StatusCode)
	}
	clock.SetTime(start.Add(SessionLifetime))
	if resp := browserDo(t, ts, http.MethodGet, "/api", cookie.Value); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /api when the session expires: got %d, want 401", resp.StatusCode)
	}
	resp := browserDo(t, ts, http.MethodGet, uiHome, cookie.Value, "Accept: text/html")
	page, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(page), "not logged in") || !strings.Contains(string(page), "kubectl proxy") {
		t.Errorf("GET %s in a browser after the session expired: got %d:\n%s\nwant the 401 page saying how to log in", uiHome, resp.StatusCode, page)
	}
}
