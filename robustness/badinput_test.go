//go:build linux

package robustness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// badRequest is one malformed request and the Status upstream answers it
// with. e2e/bad_input_test.go holds the first table (bodies, kinds, names,
// conflicts, 413, 415, 410, 504 on an in-process stack); this one adds
// what it does not cover and runs against a child process, which must
// still be alive after every answer.
type badRequest struct {
	name        string
	method      string
	path        string // under /api/v1/namespaces/robustness unless it starts with /api or /apis
	contentType string
	body        string
	wantCode    int
	wantReason  metav1.StatusReason
}

// What the cases share: a ConfigMap body and the media types.
const (
	cmBody                             = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s"}%s}`
	jsonType, mergeType, jsonPatchType = "application/json", "application/merge-patch+json", "application/json-patch+json"
	strategicType                      = "application/strategic-merge-patch+json"
)

// badRequests are grouped by what is wrong with them.
func badRequests() []badRequest {
	return slices.Concat(notObjects(), wrongKinds(), invalidFields(), hugeBodies(), versionParams(), selectorParams(), otherParams(), badPatches(), wrongPaths())
}

// notObjects are bodies that are not an object.
func notObjects() []badRequest {
	nested := strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000)
	bomb := "a: &a [\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\"]\n"
	for i, prev := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		last := string(rune('a' + i))
		bomb += fmt.Sprintf("%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n", prev, prev, last, last, last, last, last, last, last, last, last)
	}
	return []badRequest{
		{"an empty body is 400", "POST", "/configmaps", jsonType, "", 400, metav1.StatusReasonBadRequest},
		{"a JSON null is an object without a name: 422", "POST", "/configmaps", jsonType, "null", 422, metav1.StatusReasonInvalid},
		{"a JSON array is 400", "POST", "/configmaps", jsonType, "[]", 400, metav1.StatusReasonBadRequest},
		{"a JSON string is 400", "POST", "/configmaps", jsonType, `"configmap"`, 400, metav1.StatusReasonBadRequest},
		{"bytes that are not UTF-8 are 400", "POST", "/configmaps", jsonType, "\xff\xfe\xfd", 400, metav1.StatusReasonBadRequest},
		{"JSON nested 20,000 deep is 400", "POST", "/configmaps", jsonType, nested, 400, metav1.StatusReasonBadRequest},
		{"a YAML alias bomb is 400", "POST", "/configmaps", "application/yaml", bomb, 400, metav1.StatusReasonBadRequest},
		{"protobuf garbage is 400", "POST", "/configmaps", "application/vnd.kubernetes.protobuf", "k8s\x00\x0a\xff\xff\xff", 400, metav1.StatusReasonBadRequest},
		{"a field of the wrong type is 400", "POST", "/configmaps", jsonType, fmt.Sprintf(cmBody, "wrongtype", `,"data":{"k":1}`), 400, metav1.StatusReasonBadRequest},
		{"a duplicate field with strict validation is 400", "POST", "/configmaps?fieldValidation=Strict", jsonType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup","name":"dup"}}`, 400, metav1.StatusReasonBadRequest},
	}
}

// wrongKinds are objects of the wrong kind, version or namespace.
func wrongKinds() []badRequest {
	return []badRequest{
		{"a Pod sent to configmaps is 400", "POST", "/configmaps", jsonType, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}`, 400, metav1.StatusReasonBadRequest},
		{"a kind no scheme knows is 400", "POST", "/configmaps", jsonType, `{"apiVersion":"v1","kind":"Widget","metadata":{"name":"w"}}`, 400, metav1.StatusReasonBadRequest},
		{"a group version no one serves is 400", "POST", "/configmaps", jsonType, `{"apiVersion":"example.com/v9","kind":"ConfigMap","metadata":{"name":"x"}}`, 400, metav1.StatusReasonBadRequest},
		{"a list sent as an object is 400", "POST", "/configmaps", jsonType, `{"apiVersion":"v1","kind":"ConfigMapList","items":[]}`, 400, metav1.StatusReasonBadRequest},
		{"an object for another namespace is 400", "POST", "/configmaps", jsonType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"default"}}`, 400, metav1.StatusReasonBadRequest},
	}
}

// invalidFields are objects with invalid names, keys and labels.
func invalidFields() []badRequest {
	return []badRequest{
		{"a name of 254 characters is 422", "POST", "/configmaps", jsonType, fmt.Sprintf(cmBody, strings.Repeat("a", 254), ""), 422, metav1.StatusReasonInvalid},
		{"a name with a slash is 422", "POST", "/configmaps", jsonType, fmt.Sprintf(cmBody, "a/b", ""), 422, metav1.StatusReasonInvalid},
		{"an empty name without generateName is 422", "POST", "/configmaps", jsonType, fmt.Sprintf(cmBody, "", ""), 422, metav1.StatusReasonInvalid},
		{"a data key with a space is 422", "POST", "/configmaps", jsonType, fmt.Sprintf(cmBody, "badkey", `,"data":{"a b":"v"}`), 422, metav1.StatusReasonInvalid},
		{"a label value of 64 characters is 422", "POST", "/configmaps", jsonType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"lbl","labels":{"k":"` + strings.Repeat("v", 64) + `"}}}`, 422, metav1.StatusReasonInvalid},
		{"a namespace with an invalid name is 422", "POST", "/api/v1/namespaces", jsonType, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"Bad_Name"}}`, 422, metav1.StatusReasonInvalid},
	}
}

// hugeBodies are bodies over 3 MiB, on every verb that takes one.
func hugeBodies() []badRequest {
	big := strings.Repeat("x", 3<<20+1)
	return []badRequest{
		{"an update over 3 MiB is 413", "PUT", "/configmaps/existing", jsonType, fmt.Sprintf(cmBody, "existing", `,"data":{"k":"`+big+`"}`), 413, metav1.StatusReasonRequestEntityTooLarge},
		{"a patch over 3 MiB is 413", "PATCH", "/configmaps/existing", mergeType, `{"data":{"k":"` + big + `"}}`, 413, metav1.StatusReasonRequestEntityTooLarge},
		{"a delete body over 3 MiB is 413", "DELETE", "/configmaps/existing", jsonType, `{"kind":"DeleteOptions","apiVersion":"v1","dryRun":["` + big + `"]}`, 413, metav1.StatusReasonRequestEntityTooLarge},
	}
}

// versionParams are bad resourceVersions, preconditions and continue tokens.
func versionParams() []badRequest {
	return []badRequest{
		{"a resourceVersion that is not a number is 400", "GET", "/configmaps?resourceVersion=abc", "", "", 400, metav1.StatusReasonBadRequest},
		{"a watch from a resourceVersion that is not a number is 400", "GET", "/configmaps?watch=1&resourceVersion=abc", "", "", 400, metav1.StatusReasonBadRequest},
		{"resourceVersionMatch without resourceVersion is 422", "GET", "/configmaps?resourceVersionMatch=Exact", "", "", 422, metav1.StatusReasonInvalid},
		{"an unknown resourceVersionMatch is 422", "GET", "/configmaps?resourceVersion=1&resourceVersionMatch=Newest", "", "", 422, metav1.StatusReasonInvalid},
		{"an update with a resourceVersion that is not a number is 400", "PUT", "/configmaps/existing", jsonType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"existing","resourceVersion":"abc"}}`, 400, metav1.StatusReasonBadRequest},
		{"a delete precondition on a stale resourceVersion is 409", "DELETE", "/configmaps/existing", jsonType, `{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"resourceVersion":"1"}}`, 409, metav1.StatusReasonConflict},
		{"a delete precondition on another uid is 409", "DELETE", "/configmaps/existing", jsonType, `{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"00000000-0000-0000-0000-000000000000"}}`, 409, metav1.StatusReasonConflict},
		{"a continue token that is not one is 400", "GET", "/configmaps?limit=1&continue=garbage", "", "", 400, metav1.StatusReasonBadRequest},
	}
}

// selectorParams are label and field selectors that do not parse or apply.
func selectorParams() []badRequest {
	return []badRequest{
		{"a label selector that does not parse is 400", "GET", "/configmaps?labelSelector=a%3D%3D%3Db", "", "", 400, metav1.StatusReasonBadRequest},
		{"a label selector with an invalid value is 400", "GET", "/configmaps?labelSelector=a%3D" + strings.Repeat("v", 64), "", "", 400, metav1.StatusReasonBadRequest},
		{"a field selector on an unsupported field is 400", "GET", "/configmaps?fieldSelector=data.k%3Dv", "", "", 400, metav1.StatusReasonBadRequest},
		{"a field selector that does not parse is 400", "GET", "/configmaps?fieldSelector=%3D%3D", "", "", 400, metav1.StatusReasonBadRequest},
		{"a watch with a bad label selector is 400", "GET", "/configmaps?watch=1&labelSelector=%21%21", "", "", 400, metav1.StatusReasonBadRequest},
	}
}

// otherParams are other query parameters that do not parse or are unknown values.
func otherParams() []badRequest {
	return []badRequest{
		{"a limit that is not a number is 400", "GET", "/configmaps?limit=ten", "", "", 400, metav1.StatusReasonBadRequest},
		{"timeoutSeconds that is not a number is 400", "GET", "/configmaps?watch=1&timeoutSeconds=soon", "", "", 400, metav1.StatusReasonBadRequest},
		{"an unknown dryRun value is 422", "POST", "/configmaps?dryRun=Maybe", jsonType, fmt.Sprintf(cmBody, "dry", ""), 422, metav1.StatusReasonInvalid},
		{"an unknown fieldValidation value is 422", "POST", "/configmaps?fieldValidation=Loose", jsonType, fmt.Sprintf(cmBody, "fv", ""), 422, metav1.StatusReasonInvalid},
		{"gracePeriodSeconds that is not a number is 400", "DELETE", "/configmaps/existing?gracePeriodSeconds=later", jsonType, "", 400, metav1.StatusReasonBadRequest},
		{"an unknown propagationPolicy is 422", "DELETE", "/configmaps/existing?propagationPolicy=Sometimes", jsonType, "", 422, metav1.StatusReasonInvalid},
		{"force on a patch that is not an apply is 422", "PATCH", "/configmaps/existing?force=true", mergeType, `{"data":{"k":"v3"}}`, 422, metav1.StatusReasonInvalid},
	}
}

// badPatches are patches that are not patches, fail, or break the object.
func badPatches() []badRequest {
	return []badRequest{
		{"a JSON patch that is not an array is 400", "PATCH", "/configmaps/existing", jsonPatchType, `{"op":"add"}`, 400, metav1.StatusReasonBadRequest},
		{"a JSON patch with an unknown op is 422", "PATCH", "/configmaps/existing", jsonPatchType, `[{"op":"frobnicate","path":"/data/k","value":"v"}]`, 422, metav1.StatusReasonInvalid},
		{"a JSON patch whose test fails is 422", "PATCH", "/configmaps/existing", jsonPatchType, `[{"op":"test","path":"/metadata/name","value":"other"}]`, 422, metav1.StatusReasonInvalid},
		{"a JSON patch removing a missing path is 422", "PATCH", "/configmaps/existing", jsonPatchType, `[{"op":"remove","path":"/data/nothing/here"}]`, 422, metav1.StatusReasonInvalid},
		{"a merge patch that is not JSON is 400", "PATCH", "/configmaps/existing", mergeType, `{"data":`, 400, metav1.StatusReasonBadRequest},
		{"a merge patch that is an array is 400", "PATCH", "/configmaps/existing", mergeType, `[1,2]`, 400, metav1.StatusReasonBadRequest},
		{"a merge patch renaming the object is 400", "PATCH", "/configmaps/existing", mergeType, `{"metadata":{"name":"renamed"}}`, 400, metav1.StatusReasonBadRequest},
		{"a merge patch setting a field to the wrong type is 422", "PATCH", "/configmaps/existing", mergeType, `{"data":"flat"}`, 422, metav1.StatusReasonInvalid},
		{"a strategic merge patch with an unknown directive is 400", "PATCH", "/configmaps/existing", strategicType, `{"$patch":"explode"}`, 400, metav1.StatusReasonBadRequest},
		{"a patch making the object invalid is 422", "PATCH", "/configmaps/existing", mergeType, `{"data":{"a b":"v"}}`, 422, metav1.StatusReasonInvalid},
		{"a patch of an unknown media type is 415", "PATCH", "/configmaps/existing", "application/xml", `<data/>`, 415, metav1.StatusReasonUnsupportedMediaType},
		{"a patch of a missing object is 404", "PATCH", "/configmaps/missing", mergeType, `{"data":{"k":"v"}}`, 404, metav1.StatusReasonNotFound},
	}
}

// wrongPaths are methods a path does not serve and paths nothing serves.
func wrongPaths() []badRequest {
	return []badRequest{
		{"PUT on a collection is 405", "PUT", "/configmaps", jsonType, fmt.Sprintf(cmBody, "x", ""), 405, metav1.StatusReasonMethodNotAllowed},
		{"PATCH on a collection is 405", "PATCH", "/configmaps", mergeType, `{}`, 405, metav1.StatusReasonMethodNotAllowed},
		{"POST to an object is 405", "POST", "/configmaps/existing", jsonType, fmt.Sprintf(cmBody, "existing", ""), 405, metav1.StatusReasonMethodNotAllowed},
		{"an unknown group is 404", "GET", "/apis/example.com/v1/widgets", "", "", 404, metav1.StatusReasonNotFound},
		{"an unknown subresource is 404", "GET", "/configmaps/existing/frobs", "", "", 404, metav1.StatusReasonNotFound},
	}
}

// Every malformed request gets a Status with upstream's code and reason and
// a message, etcd is left unchanged, and minicp is still running.
func TestBadInputIsAnsweredWithAStatusAndTheProcessLives(t *testing.T) {
	c := startChild(t, childOptions{})
	cs := c.clientset()
	createNamespace(t, cs)
	ctx := testContext(t, 5*time.Minute)
	if _, err := cs.CoreV1().ConfigMaps(testNamespace).Create(ctx, configMap("existing", "v", ""), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the object the cases collide with: %v", err)
	}
	etcd, err := newEtcdClient(c.etcdEndpoints())
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	hc := httpClient(t, c.restConfig())

	cases := badRequests()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := etcdRevision(t, ctx, etcd)
			status, code := send(t, hc, c.restConfig().Host, tc.method, tc.path, tc.contentType, []byte(tc.body))
			if code != tc.wantCode || status.Code != int32(tc.wantCode) || status.Reason != tc.wantReason {
				t.Errorf("got HTTP %d, Status {kind %q, code %d, reason %q, message %q}, want %d %s",
					code, status.Kind, status.Code, status.Reason, status.Message, tc.wantCode, tc.wantReason)
			}
			if status.Kind != "Status" || status.Message == "" {
				t.Errorf("answer is not a Status with a message: %+v", status)
			}
			if after := etcdRevision(t, ctx, etcd); after != before {
				t.Errorf("etcd's revision moved %d -> %d: a refused request wrote", before, after)
			}
			c.requireAlive("after " + tc.name)
		})
	}
	ignored := ignoredParams()
	for _, tc := range ignored {
		t.Run(tc.name, func(t *testing.T) {
			if status, code := send(t, hc, c.restConfig().Host, tc.method, tc.path, tc.contentType, []byte(tc.body)); code != tc.wantCode {
				t.Errorf("got HTTP %d (%s), want %d: upstream ignores query parameters it does not know", code, status.Message, tc.wantCode)
			}
			c.requireAlive("after " + tc.name)
		})
	}
	t.Logf("robustness: bad_input cases=%d ignored_params=%d", len(cases), len(ignored))
}

// ignoredParams are requests with query parameters no API defines, which
// upstream ignores: they succeed.
func ignoredParams() []badRequest {
	return []badRequest{
		{"an unknown parameter on a list is ignored", "GET", "/configmaps?frobnicate=1", "", "", 200, ""},
		{"an unknown parameter on a get is ignored", "GET", "/configmaps/existing?pretty=maybe&x=%00", "", "", 200, ""},
		{"an unknown parameter on a create is ignored", "POST", "/configmaps?color=blue", jsonType, fmt.Sprintf(cmBody, "ignored-param", ""), 201, ""},
		{"an unknown parameter on a patch is ignored", "PATCH", "/configmaps/existing?colour=red", mergeType, `{"data":{"k":"v2"}}`, 200, ""},
	}
}

func httpClient(t testing.TB, cfg *rest.Config) *http.Client {
	t.Helper()
	shared, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hc := *shared // it may be http.DefaultClient: set the timeout on a copy
	hc.Timeout = 30 * time.Second
	return &hc
}

// send sends one request and decodes the Status it answers with; a body
// that is not JSON leaves the Status empty.
func send(t testing.TB, hc *http.Client, host, method, path, contentType string, body []byte) (metav1.Status, int) {
	t.Helper()
	if !strings.HasPrefix(path, "/api") {
		path = "/api/v1/namespaces/" + testNamespace + path
	}
	req, err := http.NewRequest(method, host+path, bytes.NewReader(body))
	if err != nil {
		t.Fatalf("building %s %s: %v", method, path, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var status metav1.Status
	if json.Unmarshal(raw, &status) != nil || status.Kind != "Status" {
		status = metav1.Status{Message: fmt.Sprintf("not a Status: %.200q", raw)}
	}
	return status, resp.StatusCode
}

func etcdRevision(t testing.TB, ctx context.Context, etcd *clientv3.Client) int64 {
	t.Helper()
	resp, err := etcd.Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatalf("reading etcd's revision: %v", err)
	}
	return resp.Header.Revision
}
