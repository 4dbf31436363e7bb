package apiserver

import (
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"minicp/registry"
)

// Without a fieldManager, a write is recorded under the User-Agent's
// product, as upstream derives it.
func TestManagerNameComesFromFieldManagerElseTheUserAgent(t *testing.T) {
	cases := []struct {
		name, fieldManager, userAgent, want string
	}{
		{"fieldManager wins", "kubectl-client-side-apply", "kubectl/v1.32.4 (linux/amd64) kubernetes/abc", "kubectl-client-side-apply"},
		{"kubectl's product", "", "kubectl/v1.32.4 (linux/amd64) kubernetes/abc", "kubectl"},
		{"a binary's name", "", "my-controller/v0.0.0 (linux/amd64) kubernetes/$Format", "my-controller"},
		{"no slash", "", "curl", "curl"},
		{"unprintable characters dropped", "", "bad\x00\tname/1.0", "badname"},
		{"cut to 128 bytes", "", strings.Repeat("m", 200) + "/1.0", strings.Repeat("m", 128)},
		{"no User-Agent", "", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := managerName(tc.fieldManager, tc.userAgent); got != tc.want {
				t.Errorf("managerName(%q, %q) = %q, want %q", tc.fieldManager, tc.userAgent, got, tc.want)
			}
		})
	}
}

// Every built-in kind has a type converter that knows it, so that every
// write records managedFields (a kind the converter did not know would be
// written without them, silently, as upstream's UpdateNoErrors does).
func TestEveryBuiltinKindRecordsManagedFieldsOnCreate(t *testing.T) {
	for _, res := range registry.Builtin() {
		fm, err := newFieldManager(res, "")
		if err != nil {
			t.Errorf("%s: %v", res.GroupVersionKind(), err)
			continue
		}
		obj := emptyObject(res)
		m := obj.(metav1.Object)
		m.SetName("x")
		m.SetLabels(map[string]string{"app": "web"})
		got, err := fm.Update(emptyObject(res), obj, "test")
		if err != nil {
			t.Errorf("%s: %v", res.GroupVersionKind(), err)
			continue
		}
		entries := got.(metav1.Object).GetManagedFields()
		if len(entries) != 1 || entries[0].Manager != "test" || !strings.Contains(string(entries[0].FieldsV1.Raw), `"f:app"`) {
			t.Errorf("%s: managedFields = %+v, want test owning f:app", res.GroupVersionKind(), entries)
		}
		if err := managedfields.ValidateManagedFields(entries); err != nil {
			t.Errorf("%s: %v", res.GroupVersionKind(), err)
		}
	}
}

// Writes through a subresource reset what that subresource cannot change.
func TestResetFieldsFollowTheStatusSubresource(t *testing.T) {
	for _, res := range registry.Builtin() {
		main, status := resetFields(res, ""), resetFields(res, "status")
		if res.HasSubresource("status") != (main != nil && status != nil) {
			t.Errorf("%s: status subresource %v, reset fields %v / %v", res.Name, res.HasSubresource("status"), main, status)
		}
	}
}

// A Scale is typed by its own model (client-go's schema has none).
func TestScaleWritesRecordManagedFields(t *testing.T) {
	deployments, ok := registry.NewBuiltinTable().Lookup(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"})
	if !ok {
		t.Fatal("no deployments")
	}
	scaleRes := scaleResource(deployments)
	fm, err := newFieldManager(scaleRes, "scale")
	if err != nil {
		t.Fatal(err)
	}
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: autoscalingv1.ScaleSpec{Replicas: 3}}
	got, err := fm.Update(emptyObject(scaleRes), scale, "scaler")
	if err != nil {
		t.Fatal(err)
	}
	entries := got.(metav1.Object).GetManagedFields()
	if len(entries) != 1 || entries[0].Subresource != "scale" || !strings.Contains(string(entries[0].FieldsV1.Raw), `"f:replicas"`) {
		t.Errorf("managedFields = %+v, want scaler owning spec.replicas through scale", entries)
	}
}
