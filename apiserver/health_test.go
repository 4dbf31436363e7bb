package apiserver

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// getHealth fetches path and returns the status code and body.
func getHealth(t *testing.T, srv *httptest.Server, path string) (int, string) {
	t.Helper()
	r := fetch(t, srv, http.MethodGet, path, "")
	return r.code, string(r.body)
}

func TestHealthEndpointsAnswerOkWhenEtcdIsReady(t *testing.T) {
	srv := httptest.NewServer(newHealthHandler(func(context.Context) error { return nil }))
	defer srv.Close()
	cases := []struct{ path, want string }{
		{"/healthz", "ok"},
		{"/livez", "ok"},
		{"/readyz", "ok"},
		{"/livez/ping", "ok"},
		{"/readyz/etcd", "ok"},
		{"/readyz?verbose", "[+]ping ok\n[+]etcd ok\nreadyz check passed\n"},
		{"/livez?verbose", "[+]ping ok\nlivez check passed\n"},
	}
	for _, tc := range cases {
		if code, body := getHealth(t, srv, tc.path); code != http.StatusOK || body != tc.want {
			t.Errorf("GET %s: got %d %q, want 200 %q", tc.path, code, body, tc.want)
		}
	}
}

func TestReadyzFailsAndNamesTheCheckWhenEtcdIsNotReady(t *testing.T) {
	srv := httptest.NewServer(newHealthHandler(func(context.Context) error { return errors.New("etcdserver: no leader") }))
	defer srv.Close()
	cases := []struct {
		path     string
		wantCode int
		want     string
	}{
		{"/readyz", 500, "[+]ping ok\n[-]etcd failed: reason withheld\nreadyz check failed\n"},
		{"/readyz?verbose", 500, "[+]ping ok\n[-]etcd failed: reason withheld\nreadyz check failed\n"},
		{"/readyz/etcd", 500, "internal server error: etcdserver: no leader\n"},
		{"/readyz?exclude=etcd", 200, "ok"},
		{"/livez", 200, "ok"},
		{"/healthz", 200, "ok"},
	}
	for _, tc := range cases {
		if code, body := getHealth(t, srv, tc.path); code != tc.wantCode || body != tc.want {
			t.Errorf("GET %s: got %d %q, want %d %q", tc.path, code, body, tc.wantCode, tc.want)
		}
	}
}

func TestReadyzGivesTheReadyCheckAShortDeadline(t *testing.T) {
	// deadlines carries the deadline the ready function saw to the test
	// goroutine; buffered so the handler never blocks on it.
	deadlines := make(chan time.Time, 1)
	srv := httptest.NewServer(newHealthHandler(func(ctx context.Context) error {
		d, ok := ctx.Deadline()
		if !ok {
			return errors.New("no deadline")
		}
		deadlines <- d
		return nil
	}))
	defer srv.Close()
	start := time.Now()
	if code, _ := getHealth(t, srv, "/readyz"); code != http.StatusOK {
		t.Fatalf("got %d, want 200", code)
	}
	if d := <-deadlines; d.Sub(start) > readyCheckTimeout+time.Second {
		t.Errorf("ready called with deadline %v after the request, want at most %v", d.Sub(start), readyCheckTimeout)
	}
}

func TestUnknownHealthCheckIsNotFound(t *testing.T) {
	srv := httptest.NewServer(newHealthHandler(nil))
	defer srv.Close()
	if code, _ := getHealth(t, srv, "/readyz/etcd"); code != http.StatusNotFound {
		t.Errorf("GET /readyz/etcd without a ready function: got %d, want 404", code)
	}
	if code, body := getHealth(t, srv, "/readyz"); code != http.StatusOK || body != "ok" {
		t.Errorf("GET /readyz without a ready function: got %d %q, want 200 ok", code, body)
	}
}
