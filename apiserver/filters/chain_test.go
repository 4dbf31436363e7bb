package filters

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func testChain(reads int) *Chain {
	return &Chain{
		Hosts: HostCheck{BindAddress: "127.0.0.1", Allowed: map[string]bool{}},
		Authn: Authenticator{
			Tokens: TokenAuthenticator{
				"admin-token": {Name: "admin", Groups: []string{GroupMasters, GroupAuthenticated}},
				"user-token":  {Name: "user", Groups: []string{GroupAuthenticated}},
			},
			Public: PublicInfoPaths,
		},
		Inflight: NewInflightLimiter(reads, reads),
	}
}

func request(method, host, path, token string) *http.Request {
	req := httptest.NewRequest(method, "http://"+host+path, strings.NewReader(""))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// The checks against what a web page could send come before
// authentication: a rebinding page is refused for its Host whatever
// credential the browser holds, and a request that passes them all is
// refused only for lacking a credential.
func TestChainChecksTheHostBeforeTheCredential(t *testing.T) {
	c := testChain(0)
	_, err := c.Check(request(http.MethodGet, "evil.example", "/api/v1/pods", ""))
	if !apierrors.IsBadRequest(err) {
		t.Errorf("foreign Host without a credential: got %v, want 400 BadRequest", err)
	}
	_, err = c.Check(request(http.MethodGet, "127.0.0.1", "/api/v1/pods", ""))
	if !apierrors.IsUnauthorized(err) {
		t.Errorf("loopback without a credential: got %v, want 401 Unauthorized", err)
	}
	if _, err := c.Check(request(http.MethodGet, "127.0.0.1", "/healthz", "")); err != nil {
		t.Errorf("public path without a credential: got %v, want it served", err)
	}
	req, err := c.Check(request(http.MethodGet, "localhost", "/api/v1/pods", "user-token"))
	if err != nil {
		t.Fatalf("a known token: got %v", err)
	}
	if u := UserFrom(req.Context()); u == nil || u.Name != "user" {
		t.Errorf("user after authentication: got %+v, want user", u)
	}
}

// The in-flight limit runs after authentication, so that it can let
// system:masters through when it is full, and refuses everyone else with
// 429 and a retry delay.
func TestChainLimitsInFlightRequestsButNotMasters(t *testing.T) {
	c := testChain(1)
	admit := func(token string) (func(), error) {
		req, err := c.Check(request(http.MethodGet, "127.0.0.1", "/api/v1/pods", token))
		if err != nil {
			t.Fatalf("check: %v", err)
		}
		return c.Admit(req, Kind{})
	}
	release, err := admit("user-token")
	if err != nil {
		t.Fatalf("first request: %v", err)
	}
	defer release()
	if _, err := admit("user-token"); !apierrors.IsTooManyRequests(err) {
		t.Errorf("second request at the limit: got %v, want 429 TooManyRequests", err)
	}
	masters, err := admit("admin-token")
	if err != nil {
		t.Fatalf("system:masters at the limit: got %v, want it served", err)
	}
	masters()
	watch, err := c.Admit(request(http.MethodGet, "127.0.0.1", "/api/v1/pods", ""), Kind{LongRunning: true})
	if err != nil {
		t.Fatalf("long-running request at the limit: got %v, want it served", err)
	}
	watch()
}

// The authorization slot runs last and its refusal is the answer.
func TestChainAnswersWithTheAuthorizationRefusal(t *testing.T) {
	c := testChain(1)
	c.Authorize = func(*http.Request) error { return apierrors.NewForbidden(schemaPods, "", nil) }
	req, err := c.Check(request(http.MethodGet, "127.0.0.1", "/api/v1/pods", "user-token"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Admit(req, Kind{}); !apierrors.IsForbidden(err) {
		t.Fatalf("got %v, want 403 Forbidden", err)
	}
	// The refused request gave its in-flight slot back.
	release, err := c.Admit(req, Kind{})
	if !apierrors.IsForbidden(err) || release != nil {
		t.Fatalf("second refused request: got %v, want 403 Forbidden again, not 429", err)
	}
}

var schemaPods = schema.GroupResource{Resource: "pods"}
