package apiserver

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"minicp/kinds"
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
	for _, res := range kinds.Builtin() {
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
	for _, res := range kinds.Builtin() {
		main, status := resetFields(res, ""), resetFields(res, "status")
		if res.HasSubresource("status") != (main != nil && status != nil) {
			t.Errorf("%s: status subresource %v, reset fields %v / %v", res.Name, res.HasSubresource("status"), main, status)
		}
	}
}

// A Scale is typed by its own model (client-go's schema has none).
func TestScaleWritesRecordManagedFields(t *testing.T) {
	deployments, ok := kinds.NewTable().Lookup(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"})
	if !ok {
		t.Fatal("no deployments")
	}
	scaleRes := scaleResource(deployments)
	fm, err := newFieldManager(deployments, "scale")
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

// A write finds the field manager its descriptor keeps for the
// subresource: the same one every time, another for another subresource,
// and a new one for a new descriptor of the same kind (a changed custom
// resource gets a new descriptor, so new field managers).
func TestEachDescriptorKeepsOneFieldManagerPerSubresource(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	deployments, _ := kinds.NewTable().Lookup(gvr)
	get := func(res *registry.Resource, subresource string) *managedfields.FieldManager {
		t.Helper()
		fm, err := fieldManagerFor(res, subresource)
		if err != nil {
			t.Fatal(err)
		}
		return fm
	}
	main := get(deployments, "")
	if get(deployments, "") != main {
		t.Error("a second write built another field manager for the object")
	}
	if status, scale := get(deployments, "status"), get(deployments, "scale"); status == main || scale == main || status == scale {
		t.Error("the object, status and scale share a field manager")
	}
	again, _ := kinds.NewTable().Lookup(gvr)
	if get(again, "") == main {
		t.Error("a new descriptor of the same kind got the old descriptor's field manager")
	}
}

// Concurrent writes share one field manager (upstream's handlers share
// theirs too): run with -race, each write records its own manager and
// fields and nothing else.
func TestConcurrentWritesShareAFieldManager(t *testing.T) {
	configMaps, _ := kinds.NewTable().Lookup(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			for j := range 20 {
				fm, err := fieldManagerFor(configMaps, "")
				if err != nil {
					errs <- err
					return
				}
				manager, key := fmt.Sprintf("writer-%d", i), fmt.Sprintf("k%d", j)
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{key: "v"}}
				got, err := fm.Update(emptyObject(configMaps), cm, manager)
				if err != nil {
					errs <- err
					return
				}
				entries := got.(metav1.Object).GetManagedFields()
				if len(entries) != 1 || entries[0].Manager != manager || !strings.Contains(string(entries[0].FieldsV1.Raw), `"f:`+key+`"`) {
					errs <- fmt.Errorf("%s writing %s: managedFields = %+v", manager, key, entries)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
