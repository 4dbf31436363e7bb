package apiserver

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Every bad request is answered with a Status carrying upstream's code and
// reason, and a message that says what is wrong.
func TestBadRequestsAreAnsweredWithUpstreamStatus(t *testing.T) {
	store := newFakeStore()
	ts := startTestServer(t, store, func(c *Config) { c.MaxRequestBodyBytes = 1 << 10 })
	if _, err := ts.clientset(t).CoreV1().Pods("default").Create(testContext(t), testPod("existing"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	const pods = "/api/v1/namespaces/default/pods"
	const jsonBody = "Content-Type: application/json"
	cases := []struct {
		name        string
		method      string
		path        string
		body        string
		headers     []string
		wantCode    int32
		wantReason  metav1.StatusReason
		wantMessage string // a substring of the message
	}{
		{"unknown resource is 404 NotFound naming it", "GET", "/api/v1/namespaces/default/widgets", "", nil, 404, metav1.StatusReasonNotFound, "the server could not find the requested resource: minicp does not serve the resource \"widgets\" in the core group version v1; `kubectl api-resources` lists what minicp serves"},
		{"unknown group version is 404 NotFound naming it", "GET", "/apis/example.com/v1/namespaces/default/widgets", "", nil, 404, metav1.StatusReasonNotFound, "minicp does not serve the resource \"widgets\" in the group version example.com/v1; `kubectl api-resources`"},
		{"unknown subresource is 404 NotFound naming it", "GET", pods + "/existing/ephemeralcontainers", "", nil, 404, metav1.StatusReasonNotFound, "minicp does not serve the subresource \"ephemeralcontainers\" of pods; `kubectl api-resources`"},
		{"logs of a pod are 400 BadRequest: no containers run", "GET", pods + "/existing/log", "", nil, 400, metav1.StatusReasonBadRequest, "pod \"existing\" has no logs to read: minicp stores pods but runs no containers"},
		{"exec in a pod is 400 BadRequest: no containers run", "POST", pods + "/existing/exec?command=sh", "", []string{jsonBody}, 400, metav1.StatusReasonBadRequest, "pod \"existing\" has nothing to exec in: minicp stores pods but runs no containers"},
		{"logs of a missing pod are 404 NotFound", "GET", pods + "/missing/log", "", nil, 404, metav1.StatusReasonNotFound, `pods "missing" not found`},
		{"cluster-scoped resource inside a namespace is 404 NotFound", "GET", "/api/v1/namespaces/default/nodes", "", nil, 404, metav1.StatusReasonNotFound, "nodes are cluster-scoped"},
		{"path outside the API is 404 NotFound", "GET", "/nothing/here", "", nil, 404, metav1.StatusReasonNotFound, "could not find"},
		{"missing object is 404 NotFound", "GET", pods + "/missing", "", nil, 404, metav1.StatusReasonNotFound, `pods "missing" not found`},
		{"POST to a named object is 405 MethodNotAllowed", "POST", pods + "/existing", fmt.Sprintf(podBody, "existing"), []string{jsonBody}, 405, metav1.StatusReasonMethodNotAllowed, "not supported"},
		{"DELETE of the namespaces collection is 405 MethodNotAllowed", "DELETE", "/api/v1/namespaces", "", nil, 405, metav1.StatusReasonMethodNotAllowed, "not supported"},
		{"DELETE of pods across all namespaces is 405 MethodNotAllowed", "DELETE", "/api/v1/pods", "", nil, 405, metav1.StatusReasonMethodNotAllowed, "not supported"},
		{"DELETE of a status subresource is 405 MethodNotAllowed", "DELETE", pods + "/existing/status", "", nil, 405, metav1.StatusReasonMethodNotAllowed, "not supported"},
		{"malformed JSON is 400 BadRequest", "POST", pods, `{"apiVersion":"v1","kind":"Pod",`, []string{jsonBody}, 400, metav1.StatusReasonBadRequest, "the object provided is unrecognized (must be of type Pod)"},
		{"wrong apiVersion is 400 BadRequest", "POST", pods, `{"apiVersion":"v2","kind":"Pod","metadata":{"name":"p"}}`, []string{jsonBody}, 400, metav1.StatusReasonBadRequest, "the API version in the data (v2) does not match the expected API version (v1)"},
		{"another group's apiVersion is 400 BadRequest", "POST", pods, `{"apiVersion":"coordination.k8s.io/v1","kind":"Pod","metadata":{"name":"p"}}`, []string{jsonBody}, 400, metav1.StatusReasonBadRequest, "the API version in the data (coordination.k8s.io/v1) does not match the expected API version (v1)"},
		{"kind not matching the URL is 400 BadRequest", "POST", pods, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p"}}`, []string{jsonBody}, 400, metav1.StatusReasonBadRequest, `ConfigMap in version "v1" cannot be handled as a Pod`},
		{"name in the body differing from the URL is 400 BadRequest", "PUT", pods + "/existing", fmt.Sprintf(podBody, "other"), []string{jsonBody}, 400, metav1.StatusReasonBadRequest, "the name of the object (other) does not match the name on the URL (existing)"},
		{"namespace in the body differing from the URL is 400 BadRequest", "POST", pods, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"kube-system"}}`, []string{jsonBody}, 400, metav1.StatusReasonBadRequest, "the namespace of the provided object does not match the namespace sent on the request"},
		{"body over the limit is 413 RequestEntityTooLarge", "POST", pods, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + strings.Repeat("x", 2<<10) + `"}}`, []string{jsonBody}, 413, metav1.StatusReasonRequestEntityTooLarge, "Request entity too large: limit is 1024"},
		{"unknown body media type is 415 UnsupportedMediaType", "POST", pods, fmt.Sprintf(podBody, "p"), []string{"Content-Type: text/plain"}, 415, metav1.StatusReasonUnsupportedMediaType, "Content-Types: application/json"},
		{"unacceptable Accept is 406 NotAcceptable", "GET", pods, "", []string{"Accept: text/html"}, 406, metav1.StatusReasonNotAcceptable, "only the following media types are accepted"},
		{"unknown field under Strict is 400 BadRequest", "POST", pods + "?fieldValidation=Strict", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"foo":1,"containers":[{"name":"c","image":"nginx"}]}}`, []string{jsonBody}, 400, metav1.StatusReasonBadRequest, `strict decoding error: unknown field "spec.foo"`},
		{"duplicate field under Strict is 400 BadRequest", "POST", pods + "?fieldValidation=Strict", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","name":"q"}}`, []string{jsonBody}, 400, metav1.StatusReasonBadRequest, `duplicate field "metadata.name"`},
		{"unknown fieldValidation value is 422 Invalid", "POST", pods + "?fieldValidation=Loose", fmt.Sprintf(podBody, "p"), []string{jsonBody}, 422, metav1.StatusReasonInvalid, "fieldValidation"},
		{"unknown dryRun value is 422 Invalid", "POST", pods + "?dryRun=Some", fmt.Sprintf(podBody, "p"), []string{jsonBody}, 422, metav1.StatusReasonInvalid, "dryRun"},
		{"label selector that does not parse is 400 BadRequest", "GET", pods + "?labelSelector=a%20in%20(", "", nil, 400, metav1.StatusReasonBadRequest, "labelSelector"},
		{"field selector that does not parse is 400 BadRequest", "GET", pods + "?fieldSelector=a%3D%3D%3Db", "", nil, 400, metav1.StatusReasonBadRequest, "fieldSelector"},
		{"limit that is not a number is 400 BadRequest", "GET", pods + "?limit=many", "", nil, 400, metav1.StatusReasonBadRequest, "the query parameters could not be parsed"},
		{"resourceVersionMatch without resourceVersion is 422 Invalid", "GET", pods + "?resourceVersionMatch=Exact", "", nil, 422, metav1.StatusReasonInvalid, "resourceVersionMatch is forbidden unless resourceVersion is provided"},
		{"sendInitialEvents on a list is 422 Invalid", "GET", pods + "?sendInitialEvents=true", "", nil, 422, metav1.StatusReasonInvalid, "sendInitialEvents is forbidden for list"},
		{"timeout that does not parse is 400 BadRequest", "GET", pods + "?timeout=soon", "", nil, 400, metav1.StatusReasonBadRequest, "invalid timeout specified in the request URL"},
		{"apply without a fieldManager is 422 Invalid", "PATCH", pods + "/existing", "apiVersion: v1\nkind: Pod\n", []string{"Content-Type: application/apply-patch+yaml"}, 422, metav1.StatusReasonInvalid, "fieldManager: Required value: is required for apply patch"},
		{"fieldManager longer than 128 bytes is 422 Invalid", "PATCH", pods + "/existing?fieldManager=" + strings.Repeat("m", 129), "{}", []string{"Content-Type: application/merge-patch+json"}, 422, metav1.StatusReasonInvalid, "fieldManager: Too long: may not be more than 128 bytes"},
		{"force on a merge patch is 422 Invalid", "PATCH", pods + "/existing?force=true", "{}", []string{"Content-Type: application/merge-patch+json"}, 422, metav1.StatusReasonInvalid, "force: Forbidden: may not be specified for non-apply patch"},
		{"apply in CBOR is 415 UnsupportedMediaType", "PATCH", pods + "/existing?fieldManager=me", "", []string{"Content-Type: application/apply-patch+cbor"}, 415, metav1.StatusReasonUnsupportedMediaType, "application/apply-patch+yaml"},
		{"apply that is not a YAML object is 400 BadRequest", "PATCH", pods + "/existing?fieldManager=me", "- a\n- b\n", []string{"Content-Type: application/apply-patch+yaml"}, 400, metav1.StatusReasonBadRequest, "error decoding patch"},
		{"apply of another version is 400 BadRequest", "PATCH", pods + "/existing?fieldManager=me", "apiVersion: v2\nkind: Pod\nmetadata:\n  name: existing\n", []string{"Content-Type: application/apply-patch+yaml"}, 400, metav1.StatusReasonBadRequest, "must have apiVersion: v1 and kind: Pod"},
		{"apply with a duplicate field under Strict is 400 BadRequest", "PATCH", pods + "/existing?fieldManager=me&fieldValidation=Strict", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: existing\n  name: existing\n", []string{"Content-Type: application/apply-patch+yaml"}, 400, metav1.StatusReasonBadRequest, "error strict decoding patch: error converting YAML to JSON: yaml: unmarshal errors:"},
		{"apply that is not a YAML object under Strict is 400 BadRequest", "PATCH", pods + "/existing?fieldManager=me&fieldValidation=Strict", "- a\n- b\n", []string{"Content-Type: application/apply-patch+yaml"}, 400, metav1.StatusReasonBadRequest, "error decoding patch"},
		{"apply of another version with a duplicate field under Strict names the version", "PATCH", pods + "/existing?fieldManager=me&fieldValidation=Strict", "apiVersion: v2\nkind: Pod\nmetadata:\n  name: existing\n  name: existing\n", []string{"Content-Type: application/apply-patch+yaml"}, 400, metav1.StatusReasonBadRequest, "must have apiVersion: v1 and kind: Pod"},
		{"unknown patch type is 415 UnsupportedMediaType", "PATCH", pods + "/existing", "{}", []string{jsonBody}, 415, metav1.StatusReasonUnsupportedMediaType, "application/merge-patch+json"},
		{"JSON patch that is not a patch is 400 BadRequest", "PATCH", pods + "/existing", `{"op":"add"}`, []string{"Content-Type: application/json-patch+json"}, 400, metav1.StatusReasonBadRequest, "must be an array of operations"},
		{"merge patch that is not JSON is 400 BadRequest", "PATCH", pods + "/existing", `{labels`, []string{"Content-Type: application/merge-patch+json"}, 400, metav1.StatusReasonBadRequest, "must be a JSON object"},
		{"JSON patch removing a missing path is 422 Invalid", "PATCH", pods + "/existing", `[{"op":"remove","path":"/spec/nothing"}]`, []string{"Content-Type: application/json-patch+json"}, 422, metav1.StatusReasonInvalid, "could not be applied"},
		{"patch renaming the object is 400 BadRequest", "PATCH", pods + "/existing", `{"metadata":{"name":"other"}}`, []string{"Content-Type: application/merge-patch+json"}, 400, metav1.StatusReasonBadRequest, "does not match the name on the URL"},
		{"patch of a missing object is 404 NotFound", "PATCH", pods + "/missing", `{"metadata":{"labels":{"a":"b"}}}`, []string{"Content-Type: application/merge-patch+json"}, 404, metav1.StatusReasonNotFound, `pods "missing" not found`},
		{"delete with a body that is not DeleteOptions is 400 BadRequest", "DELETE", pods + "/existing", `{"apiVersion":"v1","kind":"DeleteOptions","gracePeriodSeconds":"soon"}`, []string{jsonBody}, 400, metav1.StatusReasonBadRequest, "DeleteOptions"},
		{"delete with a stale precondition is 409 Conflict", "DELETE", pods + "/existing", `{"apiVersion":"v1","kind":"DeleteOptions","preconditions":{"resourceVersion":"1"}}`, []string{jsonBody}, 409, metav1.StatusReasonConflict, "precondition"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := ts.do(t, tc.method, tc.path, tc.body, tc.headers...)
			status := resp.status(t)
			if int32(resp.code) != tc.wantCode || status.Code != tc.wantCode || status.Reason != tc.wantReason {
				t.Errorf("got HTTP %d, Status {code %d, reason %q}, want %d %q; message: %s", resp.code, status.Code, status.Reason, tc.wantCode, tc.wantReason, status.Message)
			}
			if status.Status != metav1.StatusFailure || status.APIVersion != "v1" {
				t.Errorf("got status %q apiVersion %q, want Failure v1", status.Status, status.APIVersion)
			}
			if status.Message == "" || !strings.Contains(status.Message, tc.wantMessage) {
				t.Errorf("got message %q, want it to contain %q", status.Message, tc.wantMessage)
			}
		})
	}
	if _, err := ts.clientset(t).CoreV1().Pods("default").Get(testContext(t), "existing", metav1.GetOptions{}); err != nil {
		t.Errorf("the pod the failed requests aimed at is gone: %v", err)
	}
}

// A 405 names the methods the path does serve.
func TestMethodNotAllowedListsTheAllowedMethods(t *testing.T) {
	ts := startTestServer(t, newFakeStore())
	resp := ts.do(t, "PUT", "/api/v1/namespaces/default/pods", "{}", "Content-Type: application/json")
	if got, want := resp.header.Get("Allow"), "GET, POST, DELETE"; got != want {
		t.Errorf("got Allow %q, want %q", got, want)
	}
	resp = ts.do(t, "PUT", "/api/v1/namespaces", "{}", "Content-Type: application/json")
	if got, want := resp.header.Get("Allow"), "GET, POST"; got != want {
		t.Errorf("namespaces: got Allow %q, want %q (no deletecollection)", got, want)
	}
	resp = ts.do(t, "POST", "/api/v1/pods", "{}", "Content-Type: application/json")
	if resp.code != 405 || resp.header.Get("Allow") != "GET" {
		t.Errorf("POST across namespaces: got %d Allow %q, want 405 Allow GET", resp.code, resp.header.Get("Allow"))
	}
}

// Errors are encoded as the client accepts: a protobuf client gets a
// protobuf Status, which client-go turns into a typed API error.
func TestErrorsAreEncodedInTheNegotiatedMediaType(t *testing.T) {
	ts := startTestServer(t, newFakeStore())
	resp := ts.do(t, "GET", "/api/v1/namespaces/default/pods/missing", "", "Accept: application/vnd.kubernetes.protobuf")
	if got := resp.header.Get("Content-Type"); got != "application/vnd.kubernetes.protobuf" {
		t.Errorf("got Content-Type %q, want protobuf", got)
	}
	if !strings.HasPrefix(string(resp.body), "k8s\x00") {
		t.Errorf("body is not a protobuf message: %q", resp.body)
	}
	_, err := ts.protobufClientset(t).CoreV1().Pods("default").Get(testContext(t), "missing", metav1.GetOptions{})
	if status, ok := err.(interface{ Status() metav1.Status }); !ok || status.Status().Reason != metav1.StatusReasonNotFound {
		t.Errorf("got error %v, want a NotFound API error", err)
	}
	// A Table Accept header falls back to plain JSON for a Status.
	resp = ts.do(t, "GET", "/api/v1/namespaces/default/pods/missing", "", "Accept: application/json;as=Table;v=v1;g=meta.k8s.io")
	if status := resp.status(t); status.Code != 404 {
		t.Errorf("got %d, want 404", status.Code)
	}
}
