package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/e2e/framework"
)

const podJSON = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`

// Every bad request gets a Kubernetes Status with upstream's code and
// reason, and leaves etcd exactly as it was.
func TestBadInputGetsUpstreamStatusAndLeavesEtcdUnchanged(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, 60*time.Second)
	// Objects the cases below collide with.
	if _, err := s.Clientset.CoreV1().Pods("default").Create(ctx, nginxPod("existing"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create existing pod: %v", err)
	}
	existing, err := s.Clientset.CoreV1().Pods("default").Get(ctx, "existing", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get existing pod: %v", err)
	}
	huge := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"huge"},"data":{"k":"` + strings.Repeat("x", 3<<20+1) + `"}}`
	staleRV := existing.ResourceVersion
	if _, err := s.Clientset.CoreV1().Pods("default").Patch(ctx, "existing", "application/merge-patch+json", []byte(`{"metadata":{"labels":{"v":"2"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch existing pod: %v", err)
	}

	cases := []struct {
		name        string
		method      string
		path        string
		contentType string
		body        string
		wantCode    int
		wantReason  metav1.StatusReason
	}{
		{"malformed JSON body is 400 BadRequest", "POST", "/api/v1/namespaces/default/pods", "application/json", `{"apiVersion":"v1","kind":"Pod",`, 400, metav1.StatusReasonBadRequest},
		{"wrong apiVersion in body is 400 BadRequest", "POST", "/api/v1/namespaces/default/pods", "application/json", `{"apiVersion":"v2","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`, 400, metav1.StatusReasonBadRequest},
		{"kind not matching the URL is 400 BadRequest", "POST", "/api/v1/namespaces/default/pods", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p"}}`, 400, metav1.StatusReasonBadRequest},
		{"name in body differing from the URL is 400 BadRequest", "PUT", "/api/v1/namespaces/default/pods/existing", "application/json", fmt.Sprintf(podJSON, "other"), 400, metav1.StatusReasonBadRequest},
		{"unknown field with strict validation is 400 BadRequest", "POST", "/api/v1/namespaces/default/pods?fieldValidation=Strict", "application/json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"bogus":1,"containers":[{"name":"c","image":"nginx"}]}}`, 400, metav1.StatusReasonBadRequest},
		{"pod without containers is 422 Invalid", "POST", "/api/v1/namespaces/default/pods", "application/json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[]}}`, 422, metav1.StatusReasonInvalid},
		{"invalid name is 422 Invalid", "POST", "/api/v1/namespaces/default/pods", "application/json", fmt.Sprintf(podJSON, "Not_A_DNS_Name"), 422, metav1.StatusReasonInvalid},
		{"missing object is 404 NotFound", "GET", "/api/v1/namespaces/default/pods/missing", "", "", 404, metav1.StatusReasonNotFound},
		{"create in a missing namespace is 404 NotFound", "POST", "/api/v1/namespaces/nowhere/pods", "application/json", fmt.Sprintf(podJSON, "p"), 404, metav1.StatusReasonNotFound},
		{"second create of a name is 409 AlreadyExists", "POST", "/api/v1/namespaces/default/pods", "application/json", fmt.Sprintf(podJSON, "existing"), 409, metav1.StatusReasonAlreadyExists},
		{"update with a stale resourceVersion is 409 Conflict", "PUT", "/api/v1/namespaces/default/pods/existing", "application/json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"existing","resourceVersion":"` + staleRV + `"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`, 409, metav1.StatusReasonConflict},
		{"body over 3 MiB is 413 RequestEntityTooLarge", "POST", "/api/v1/namespaces/default/configmaps", "application/json", huge, 413, metav1.StatusReasonRequestEntityTooLarge},
		{"unsupported body media type is 415 UnsupportedMediaType", "POST", "/api/v1/namespaces/default/pods", "text/plain", fmt.Sprintf(podJSON, "p"), 415, metav1.StatusReasonUnsupportedMediaType},
		{"list at a compacted exact revision is 410 Expired", "GET", "/api/v1/namespaces/default/pods?resourceVersion=1&resourceVersionMatch=Exact", "", "", 410, metav1.StatusReasonExpired},
		{"list at a future revision times out with 504 Timeout", "GET", "/api/v1/namespaces/default/pods?resourceVersion=99999999", "", "", 504, metav1.StatusReasonTimeout},
		{"unknown resource is 404 NotFound", "GET", "/api/v1/namespaces/default/widgets", "", "", 404, metav1.StatusReasonNotFound},
	}

	// Compact etcd to its current revision so the Exact case reads below it.
	rev := currentRevision(t, s)
	if _, err := s.Etcd.Compact(ctx, rev); err != nil {
		t.Fatalf("compact: %v", err)
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := currentRevision(t, s)
			status, code := doRaw(t, s, tc.method, tc.path, tc.contentType, tc.body)
			if code != tc.wantCode {
				t.Errorf("HTTP code = %d, want %d (status: %+v)", code, tc.wantCode, status)
			}
			if status.Kind != "Status" || status.Code != int32(tc.wantCode) || status.Reason != tc.wantReason {
				t.Errorf("Status = {kind %q code %d reason %q}, want {Status %d %q}", status.Kind, status.Code, status.Reason, tc.wantCode, tc.wantReason)
			}
			if status.Message == "" {
				t.Errorf("Status has no message; users need to be told what went wrong")
			}
			if after := currentRevision(t, s); after != before {
				t.Errorf("etcd revision moved %d -> %d: a failed request wrote to etcd", before, after)
			}
		})
	}
}

func currentRevision(t testing.TB, s *framework.Stack) int64 {
	t.Helper()
	ctx := framework.Context(t, 10*time.Second)
	resp, err := s.Etcd.Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatalf("reading etcd revision: %v", err)
	}
	return resp.Header.Revision
}

// doRaw sends one HTTP request and decodes the Status in the response.
func doRaw(t testing.TB, s *framework.Stack, method, path, contentType, body string) (metav1.Status, int) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, bytes.NewBufferString(body))
	if err != nil {
		t.Fatalf("building request: %v", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.HTTP.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	var status metav1.Status
	if err := json.Unmarshal(raw, &status); err != nil {
		t.Errorf("response is not a Status: %v: %s", err, raw)
	}
	return status, resp.StatusCode
}
