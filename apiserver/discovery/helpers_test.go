package discovery

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/kinds"
)

// testResources is the table of every built-in kind.
var testResources = kinds.NewTable()

// rawResponse is a response read whole.
type rawResponse struct {
	code   int
	header http.Header
	body   []byte
}

// fetch sends one request to srv and reads its response; headers are
// "Name: value" strings.
func fetch(t *testing.T, srv *httptest.Server, method, path, body string, headers ...string) rawResponse {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
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
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading %s %s: %v", method, path, err)
	}
	return rawResponse{code: resp.StatusCode, header: resp.Header, body: raw}
}

// status decodes the response as a JSON Status, failing if it is not one.
func (r rawResponse) status(t *testing.T) metav1.Status {
	t.Helper()
	var s metav1.Status
	if err := json.Unmarshal(r.body, &s); err != nil || s.Kind != "Status" {
		t.Fatalf("response is not a Status (%v): %s", err, r.body)
	}
	return s
}
