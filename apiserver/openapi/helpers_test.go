package openapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/crd"
	"minicp/internal/testsupport"
	"minicp/kinds"
	"minicp/registry"
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

// servedResourcesOf returns the descriptors of a CRD manifest's served
// versions.
func servedResourcesOf(t *testing.T, manifest string) []*registry.Resource {
	t.Helper()
	resources, err := crd.ServedResources(testsupport.DecodeCRD(t, manifest))
	if err != nil {
		t.Fatal(err)
	}
	return resources
}

// servedGroups lists the table's API groups in discovery order.
func servedGroups() []string {
	var groups []string
	for _, r := range testResources.All() {
		if !slices.Contains(groups, r.GroupVersion.Group) {
			groups = append(groups, r.GroupVersion.Group)
		}
	}
	return groups
}

// getDocument fetches path with accept and decodes the body into out,
// returning the response's Content-Type.
func getDocument(t *testing.T, srv *httptest.Server, path, accept string, out any) string {
	t.Helper()
	var headers []string
	if accept != "" {
		headers = append(headers, "Accept: "+accept)
	}
	r := fetch(t, srv, http.MethodGet, path, "", headers...)
	if r.code != http.StatusOK {
		t.Fatalf("GET %s: got %d %s, want 200", path, r.code, r.body)
	}
	if err := json.Unmarshal(r.body, out); err != nil {
		t.Fatalf("GET %s: decoding %s: %v", path, r.body, err)
	}
	return r.header.Get("Content-Type")
}
