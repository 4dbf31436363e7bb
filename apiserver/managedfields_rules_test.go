package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"minicp/registry"
)

const configMapsPath = "/api/v1/namespaces/default/configmaps"

func decodeConfigMap(t *testing.T, r rawResponse) corev1.ConfigMap {
	t.Helper()
	var cm corev1.ConfigMap
	if err := json.Unmarshal(r.body, &cm); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
	return cm
}

// A write whose body says "managedFields": [] strips the entries, as
// upstream; one that leaves the field out keeps them.
func TestAnEmptyManagedFieldsListResetsThem(t *testing.T) {
	ts, _ := startWithEtcd(t)
	jsonBody := "Content-Type: application/json"
	if r := ts.do(t, "POST", configMapsPath+"?fieldManager=creator", `{"metadata":{"name":"c"},"data":{"a":"1"}}`, jsonBody); r.code != http.StatusCreated {
		t.Fatalf("create: %d %s", r.code, r.body)
	}
	r := ts.do(t, "PUT", configMapsPath+"/c?fieldManager=updater", `{"metadata":{"name":"c"},"data":{"a":"1","b":"2"}}`, jsonBody)
	if cm := decodeConfigMap(t, r); len(cm.ManagedFields) != 2 {
		t.Fatalf("after an update without managedFields: %+v, want creator and updater", cm.ManagedFields)
	}
	r = ts.do(t, "PUT", configMapsPath+"/c?fieldManager=resetter", `{"metadata":{"name":"c","managedFields":[]},"data":{"a":"1","b":"2","c":"3"}}`, jsonBody)
	if cm := decodeConfigMap(t, r); r.code != http.StatusOK || len(cm.ManagedFields) != 0 {
		t.Fatalf("after managedFields: []: %d %+v, want none", r.code, cm.ManagedFields)
	}
}

// At most ten Update managers are kept: the oldest are merged into one
// entry, "ancient-changes", as upstream caps them.
func TestUpdateManagersAreCappedAtTen(t *testing.T) {
	ts, _ := startWithEtcd(t)
	jsonBody := "Content-Type: application/json"
	if r := ts.do(t, "POST", configMapsPath+"?fieldManager=m0", `{"metadata":{"name":"c"},"data":{"k0":"v"}}`, jsonBody); r.code != http.StatusCreated {
		t.Fatalf("create: %d %s", r.code, r.body)
	}
	var r rawResponse
	for i := 1; i <= 12; i++ {
		patch := fmt.Sprintf(`{"data":{"k%d":"v"}}`, i)
		if r = ts.do(t, "PATCH", configMapsPath+fmt.Sprintf("/c?fieldManager=m%d", i), patch, "Content-Type: application/merge-patch+json"); r.code != http.StatusOK {
			t.Fatalf("patch %d: %d %s", i, r.code, r.body)
		}
	}
	cm := decodeConfigMap(t, r)
	managers := map[string]bool{}
	for _, e := range cm.ManagedFields {
		managers[e.Manager] = true
	}
	if len(cm.ManagedFields) > 10 || !managers["ancient-changes"] || !managers["m12"] {
		t.Errorf("managers = %v (%d entries), want at most 10 with ancient-changes and the newest, m12", managers, len(cm.ManagedFields))
	}
}

// An object that is too large to store with its managedFields is stored
// without them, as upstream retries such a write (a create, an update, a
// patch); too large without them too, it is 413. An apply is not retried:
// its managedFields are what it is about.
func TestAnObjectTooLargeWithManagedFieldsIsStoredWithoutThem(t *testing.T) {
	store, _ := newEtcdStore(t, testResources, registry.Options{MaxObjectBytes: 2000})
	ts := startTestServer(t, store)
	ts.createDefaultNamespace(t)
	// 40 keys: about 1,500 bytes of data, and as many again of managedFields.
	data := map[string]string{}
	for i := range 40 {
		data[fmt.Sprintf("key-%02d", i)] = strings.Repeat("v", 28)
	}
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"name": "big"}, "data": data})
	r := ts.do(t, "POST", configMapsPath+"?fieldManager=creator", string(body), "Content-Type: application/json")
	if cm := decodeConfigMap(t, r); r.code != http.StatusCreated || len(cm.ManagedFields) != 0 || len(cm.Data) != 40 {
		t.Fatalf("create: %d, %d managedFields entries, %d keys; want 201, none, 40", r.code, len(cm.ManagedFields), len(cm.Data))
	}
	patch := `{"data":{"key-00":"` + strings.Repeat("w", 28) + `"}}`
	r = ts.do(t, "PATCH", configMapsPath+"/big?fieldManager=patcher", patch, "Content-Type: application/merge-patch+json")
	if cm := decodeConfigMap(t, r); r.code != http.StatusOK || len(cm.ManagedFields) != 0 {
		t.Fatalf("patch: %d, %d managedFields entries; want 200 and none", r.code, len(cm.ManagedFields))
	}
	body, _ = json.Marshal(map[string]any{"metadata": map[string]any{"name": "big"}, "data": data})
	r = ts.do(t, "PUT", configMapsPath+"/big?fieldManager=updater", string(body), "Content-Type: application/json")
	if cm := decodeConfigMap(t, r); r.code != http.StatusOK || len(cm.ManagedFields) != 0 {
		t.Fatalf("update: %d, %d managedFields entries; want 200 and none", r.code, len(cm.ManagedFields))
	}
	applied, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "applied"}, "data": data})
	r = ts.do(t, "PATCH", configMapsPath+"/applied?fieldManager=applier", string(applied), "Content-Type: application/apply-patch+yaml")
	if r.code != http.StatusRequestEntityTooLarge {
		t.Fatalf("apply of an object too large with its managedFields: %d %s, want 413", r.code, r.body)
	}
	data["key-40"] = strings.Repeat("v", 1000)
	body, _ = json.Marshal(map[string]any{"metadata": map[string]any{"name": "bigger"}, "data": data})
	if r := ts.do(t, "POST", configMapsPath, string(body), "Content-Type: application/json"); r.code != http.StatusRequestEntityTooLarge {
		t.Fatalf("create of an object too large without managedFields: %d, want 413", r.code)
	}
}
