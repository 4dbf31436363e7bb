package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// client-go, in JSON and in protobuf, can create, read, list, update and
// delete through the HTTP layer.
func TestClientGoRoundTripsObjectsInJSONAndProtobuf(t *testing.T) {
	ts := startTestServer(t, newFakeStore())
	for name, cs := range ts.clientsets(t) {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			pods := cs.CoreV1().Pods("default")
			podName := "web-" + name
			created, err := pods.Create(ctx, testPod(podName), metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if created.Namespace != "default" || created.ResourceVersion == "" || created.Spec.Containers[0].Image != "nginx:1.27" {
				t.Errorf("got created pod %s/%s rv %q, want it in default with a resourceVersion", created.Namespace, created.Name, created.ResourceVersion)
			}
			got, err := pods.Get(ctx, podName, metav1.GetOptions{})
			if err != nil || got.ResourceVersion != created.ResourceVersion {
				t.Fatalf("get: %v (rv %q, want %q)", err, got.ResourceVersion, created.ResourceVersion)
			}
			list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			if err != nil || len(list.Items) == 0 || list.ResourceVersion == "" {
				t.Fatalf("list: %v (%d items, rv %q)", err, len(list.Items), list.ResourceVersion)
			}
			got.Labels["tier"] = "front"
			updated, err := pods.Update(ctx, got, metav1.UpdateOptions{})
			if err != nil || updated.Labels["tier"] != "front" || updated.ResourceVersion == got.ResourceVersion {
				t.Fatalf("update: %v (labels %v, rv %q)", err, updated.Labels, updated.ResourceVersion)
			}
			if _, err := pods.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
				t.Errorf("update with a stale resourceVersion: got %v, want 409 Conflict", err)
			}
			if err := pods.Delete(ctx, podName, metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			if _, err := pods.Get(ctx, podName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("get after delete: got %v, want 404", err)
			}

			leases := cs.CoordinationV1().Leases("kube-node-lease")
			if _, err := leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "node-" + name}}, metav1.CreateOptions{}); err != nil {
				t.Fatalf("create lease (another group): %v", err)
			}
			if err := leases.Delete(ctx, "node-"+name, metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete lease with group-versioned DeleteOptions: %v", err)
			}
		})
	}
}

// A create takes its namespace from the URL when the body names none; a
// cluster-scoped object keeps none.
func TestCreateTakesTheNamespaceFromTheURL(t *testing.T) {
	ts := startTestServer(t, newFakeStore())
	resp := ts.do(t, "POST", "/api/v1/namespaces/kube-system/configmaps", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`, "Content-Type: application/json")
	var cm corev1.ConfigMap
	if err := json.Unmarshal(resp.body, &cm); err != nil || resp.code != http.StatusCreated {
		t.Fatalf("got %d %s, want 201 with the ConfigMap", resp.code, resp.body)
	}
	if cm.Namespace != "kube-system" || cm.Kind != "ConfigMap" || cm.APIVersion != "v1" {
		t.Errorf("got %s %s in %q, want v1 ConfigMap in kube-system", cm.APIVersion, cm.Kind, cm.Namespace)
	}
	resp = ts.do(t, "POST", "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"lab","namespace":"stray"}}`, "Content-Type: application/json")
	var ns corev1.Namespace
	if err := json.Unmarshal(resp.body, &ns); err != nil || resp.code != http.StatusCreated || ns.Namespace != "" {
		t.Errorf("got %d, namespace %q, want 201 and no namespace on a Namespace: %s", resp.code, ns.Namespace, resp.body)
	}
}

// fieldValidation: Warn (the default) accepts unknown fields with a
// Warning header per field, Ignore accepts silently, Strict rejects (see
// TestBadRequestsAreAnsweredWithUpstreamStatus).
func TestUnknownFieldsAreWarnedAboutByDefaultAndIgnoredOnRequest(t *testing.T) {
	ts := startTestServer(t, newFakeStore())
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s"},"spec":{"foo":1}}`
	resp := ts.do(t, "POST", "/api/v1/namespaces/default/configmaps", fmt.Sprintf(body, "warned"), "Content-Type: application/json")
	if resp.code != http.StatusCreated {
		t.Fatalf("got %d %s, want 201", resp.code, resp.body)
	}
	if got, want := resp.header.Values("Warning"), []string{`299 - "unknown field \"spec\""`}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got Warning %q, want %q", got, want)
	}
	resp = ts.do(t, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Ignore", fmt.Sprintf(body, "ignored"), "Content-Type: application/json")
	if resp.code != http.StatusCreated || len(resp.header.Values("Warning")) != 0 {
		t.Errorf("Ignore: got %d with warnings %q, want 201 and none", resp.code, resp.header.Values("Warning"))
	}
}

// YAML bodies are decoded like JSON ones, with the same strictness.
func TestYAMLBodiesAreAccepted(t *testing.T) {
	ts := startTestServer(t, newFakeStore())
	yaml := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  k: v\n"
	resp := ts.do(t, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Strict", yaml, "Content-Type: application/yaml")
	if resp.code != http.StatusCreated {
		t.Fatalf("got %d %s, want 201", resp.code, resp.body)
	}
	dup := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n"
	resp = ts.do(t, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Strict", dup, "Content-Type: application/yaml")
	if status := resp.status(t); status.Code != 400 || !strings.Contains(status.Message, "strict decoding error") {
		t.Errorf("duplicate YAML key: got %d %q, want 400 strict decoding error", status.Code, status.Message)
	}
	resp = ts.do(t, "GET", "/api/v1/namespaces/default/configmaps/from-yaml", "", "Accept: application/yaml")
	if !strings.Contains(string(resp.body), "name: from-yaml") || resp.header.Get("Content-Type") != "application/yaml" {
		t.Errorf("got %q %s, want the ConfigMap in YAML", resp.header.Get("Content-Type"), resp.body)
	}
}

// dryRun=All runs a write without storing it.
func TestDryRunWritesAreNotStored(t *testing.T) {
	store := newFakeStore()
	ts := startTestServer(t, store)
	ctx := testContext(t)
	cms := ts.clientset(t).CoreV1().ConfigMaps("default")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatalf("dry-run create: %v", err)
	}
	if _, err := cms.Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("got %v after a dry-run create, want 404", err)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "wet"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := cms.Delete(ctx, "wet", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatalf("dry-run delete: %v", err)
	}
	if _, err := cms.Get(ctx, "wet", metav1.GetOptions{}); err != nil {
		t.Errorf("got %v after a dry-run delete, want the object still there", err)
	}
}

// PUT, PATCH and GET on /status reach the store as the status subresource.
func TestStatusSubresourceIsRoutedToTheStore(t *testing.T) {
	store := newFakeStore()
	ts := startTestServer(t, store)
	ctx := testContext(t)
	pods := ts.clientset(t).CoreV1().Pods("default")
	pod, err := pods.Create(ctx, testPod("p"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	pod.Status.Phase = corev1.PodRunning
	if _, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update status: %v", err)
	}
	store.mu.Lock()
	got := store.lastUpdate.Subresource
	store.mu.Unlock()
	if got != "status" {
		t.Errorf("got subresource %q, want status", got)
	}
	if _, err := pods.Patch(ctx, "p", "application/merge-patch+json", []byte(`{"status":{"phase":"Succeeded"}}`), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("patch status: %v", err)
	}
	resp := ts.do(t, "GET", "/api/v1/namespaces/default/pods/p/status", "")
	if resp.code != http.StatusOK || !strings.Contains(string(resp.body), `"phase":"Succeeded"`) {
		t.Errorf("GET status: got %d %s", resp.code, resp.body)
	}
	if _, err := ts.clientset(t).CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "lab"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	if resp := ts.do(t, "GET", "/api/v1/namespaces/lab/status", ""); resp.code != http.StatusOK {
		t.Errorf("GET namespaces/lab/status: got %d %s, want 200", resp.code, resp.body)
	}
}

// kubectl asks for Tables; rows carry the object's metadata.
func TestGetAndListAnswerTablesWhenAsked(t *testing.T) {
	ts := startTestServer(t, newFakeStore())
	if _, err := ts.clientset(t).CoreV1().Pods("default").Create(testContext(t), testPod("p"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	accept := "Accept: application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
	for _, path := range []string{"/api/v1/namespaces/default/pods", "/api/v1/namespaces/default/pods/p", "/api/v1/pods"} {
		resp := ts.do(t, "GET", path, "", accept)
		var table metav1.Table
		if err := json.Unmarshal(resp.body, &table); err != nil || resp.code != http.StatusOK {
			t.Fatalf("%s: got %d %s", path, resp.code, resp.body)
		}
		if table.Kind != "Table" || table.APIVersion != "meta.k8s.io/v1" || len(table.ColumnDefinitions) == 0 || len(table.Rows) != 1 {
			t.Fatalf("%s: got %s %s with %d columns and %d rows, want a meta.k8s.io/v1 Table with one row", path, table.APIVersion, table.Kind, len(table.ColumnDefinitions), len(table.Rows))
		}
		var partial metav1.PartialObjectMetadata
		if err := json.Unmarshal(table.Rows[0].Object.Raw, &partial); err != nil || partial.Name != "p" || partial.Kind != "PartialObjectMetadata" {
			t.Errorf("%s: row object is %s, want the pod's PartialObjectMetadata", path, table.Rows[0].Object.Raw)
		}
	}
}

// The metadata client asks for PartialObjectMetadata(List).
func TestPartialObjectMetadataIsServedWhenAsked(t *testing.T) {
	ts := startTestServer(t, newFakeStore())
	if _, err := ts.clientset(t).CoreV1().Pods("default").Create(testContext(t), testPod("p"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	resp := ts.do(t, "GET", "/api/v1/namespaces/default/pods", "", "Accept: application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io")
	var list metav1.PartialObjectMetadataList
	if err := json.Unmarshal(resp.body, &list); err != nil || list.Kind != "PartialObjectMetadataList" || len(list.Items) != 1 || list.Items[0].Labels["app"] != "web" {
		t.Errorf("got %d %s, want a PartialObjectMetadataList with the pod", resp.code, resp.body)
	}
	resp = ts.do(t, "GET", "/api/v1/namespaces/default/pods/p", "", "Accept: application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io")
	var one metav1.PartialObjectMetadata
	if err := json.Unmarshal(resp.body, &one); err != nil || one.Kind != "PartialObjectMetadata" || one.Name != "p" {
		t.Errorf("got %d %s, want the pod's PartialObjectMetadata", resp.code, resp.body)
	}
	// A list cannot be answered as a single object's metadata.
	if resp := ts.do(t, "GET", "/api/v1/namespaces/default/pods", "", "Accept: application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"); resp.code != http.StatusNotAcceptable {
		t.Errorf("got %d, want 406", resp.code)
	}
}

func TestAcceptHeadersArePickedByQualityThenOrder(t *testing.T) {
	cases := []struct {
		accept    string
		target    responseTarget
		wantType  string
		wantAs    string
		wantError bool
	}{
		{"", targetObject, "application/json", "", false},
		{"*/*", targetObject, "application/json", "", false},
		{"application/vnd.kubernetes.protobuf, application/json", targetObject, "application/vnd.kubernetes.protobuf", "", false},
		{"application/json;q=0.5, application/yaml", targetObject, "application/yaml", "", false},
		{"application/yaml, application/json", targetWatch, "application/json", "", false},
		{"application/json;as=Table;v=v1;g=meta.k8s.io, application/json", targetList, "application/json", "Table", false},
		{"application/json;as=Table;v=v1beta1;g=meta.k8s.io, application/json", targetList, "application/json", "", false},
		{"application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io", targetList, "", "", true},
		{"application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json", targetWatch, "application/vnd.kubernetes.protobuf", "PartialObjectMetadata", false},
		{"application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", targetList, "application/vnd.kubernetes.protobuf", "PartialObjectMetadataList", false},
		{"text/html", targetObject, "", "", true},
		{"application/json;q=0", targetObject, "", "", true},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest("GET", "/", nil)
		req.Header.Set("Accept", tc.accept)
		out, err := negotiateOutput(req, tc.target)
		if tc.wantError {
			if err == nil {
				t.Errorf("Accept %q: got %s, want 406", tc.accept, out.info.MediaType)
			}
			continue
		}
		if err != nil || out.info.MediaType != tc.wantType || out.as != tc.wantAs {
			t.Errorf("Accept %q: got %s as=%q (%v), want %s as=%q", tc.accept, out.info.MediaType, out.as, err, tc.wantType, tc.wantAs)
		}
	}
}
