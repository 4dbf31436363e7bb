package testsupport

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Response is an HTTP response read whole.
type Response struct {
	Code   int
	Header http.Header
	Body   []byte
}

// Send sends one request to srv; headers are "Name: value" strings. The
// caller closes the response's body.
func Send(t testing.TB, ctx context.Context, srv *httptest.Server, method, path, body string, headers ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ": ")
		req.Header.Set(name, value)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// Fetch sends one request to srv and reads its response whole.
func Fetch(t testing.TB, srv *httptest.Server, method, path, body string, headers ...string) Response {
	t.Helper()
	resp := Send(t, context.Background(), srv, method, path, body, headers...)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading %s %s: %v", method, path, err)
	}
	return Response{Code: resp.StatusCode, Header: resp.Header, Body: raw}
}

// Status decodes the response as a JSON Status, failing if it is not one.
func (r Response) Status(t testing.TB) metav1.Status {
	t.Helper()
	var s metav1.Status
	if err := json.Unmarshal(r.Body, &s); err != nil || s.Kind != "Status" {
		t.Fatalf("response is not a Status (%v): %s", err, r.Body)
	}
	return s
}

// GetDocument fetches path with accept (none if empty), fails unless it
// answers 200, decodes the body into out and returns the Content-Type.
func GetDocument(t testing.TB, srv *httptest.Server, path, accept string, out any) string {
	t.Helper()
	var headers []string
	if accept != "" {
		headers = append(headers, "Accept: "+accept)
	}
	r := Fetch(t, srv, http.MethodGet, path, "", headers...)
	if r.Code != http.StatusOK {
		t.Fatalf("GET %s: got %d %s, want 200", path, r.Code, r.Body)
	}
	if err := json.Unmarshal(r.Body, out); err != nil {
		t.Fatalf("GET %s: decoding %s: %v", path, r.Body, err)
	}
	return r.Header.Get("Content-Type")
}
