package apiserver

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/apiserver/admission"
	"minicp/internal/testsupport"
	"minicp/kinds"
	"minicp/registry"
)

// startWithGadgets serves the built-in kinds and testsupport.GadgetsCRD's custom
// resources from a real etcd-backed Store.
func startWithGadgets(t *testing.T) *testServer {
	t.Helper()
	return startWithResources(t, servedResourcesOf(t, testsupport.GadgetsCRD))
}

// startWithResources serves the built-in kinds and resources from a real
// etcd-backed Store, without NamespaceLifecycle: no namespace is made.
func startWithResources(t *testing.T, resources []*registry.Resource) *testServer {
	t.Helper()
	table := kinds.NewTable()
	if err := table.Change(nil, resources); err != nil {
		t.Fatal(err)
	}
	store, _ := newEtcdStore(t, table, registry.Options{})
	return startServing(t, table, store, nil, func(cfg *Config) {
		cfg.DisableAdmissionPlugins = []string{admission.NamespaceLifecycleName}
	})
}

const gadgetsPath = "/apis/example.com/v1/namespaces/default/gadgets"

func gadget(name, spec string) string {
	return `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"` + name + `"},"spec":` + spec + `}`
}

// gadgetSpec decodes the spec of a Gadget in a response body.
func gadgetSpec(t *testing.T, r rawResponse) map[string]any {
	t.Helper()
	var obj struct {
		Spec map[string]any `json:"spec"`
	}
	if err := json.Unmarshal(r.body, &obj); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
	return obj.Spec
}

func TestCustomResourcesAreDefaultedPrunedAndWarnedAbout(t *testing.T) {
	ts := startWithGadgets(t)
	r := ts.do(t, "POST", gadgetsPath, gadget("a", `{"size":2,"bogus":1,"config":{"kept":true}}`), "Content-Type: application/json")
	if r.code != http.StatusCreated {
		t.Fatalf("create: %d %s", r.code, r.body)
	}
	spec := gadgetSpec(t, r)
	if _, found := spec["bogus"]; found {
		t.Errorf("spec.bogus was stored: %v", spec)
	}
	if spec["color"] != "red" {
		t.Errorf("spec.color = %v, want the default red", spec["color"])
	}
	if cfg, _ := spec["config"].(map[string]any); cfg["kept"] != true {
		t.Errorf("spec.config = %v, want the preserved field kept", spec["config"])
	}
	// fieldValidation defaults to Warn.
	if w := r.header.Get("Warning"); !strings.Contains(w, `unknown field \"spec.bogus\"`) {
		t.Errorf("Warning = %q, want one naming spec.bogus", w)
	}
}

func TestCustomResourcesRefuseUnknownFieldsUnderStrictValidation(t *testing.T) {
	ts := startWithGadgets(t)
	r := ts.do(t, "POST", gadgetsPath+"?fieldValidation=Strict", gadget("a", `{"bogus":1}`), "Content-Type: application/json")
	st := r.status(t)
	if r.code != http.StatusBadRequest || !strings.Contains(st.Message, `strict decoding error: unknown field "spec.bogus"`) {
		t.Fatalf("create: %d %q, want 400 naming spec.bogus", r.code, st.Message)
	}
	if r := ts.do(t, "POST", gadgetsPath+"?fieldValidation=Ignore", gadget("a", `{"bogus":1}`), "Content-Type: application/json"); r.code != http.StatusCreated || r.header.Get("Warning") != "" {
		t.Fatalf("create under Ignore: %d, Warning %q; want 201 and no warning", r.code, r.header.Get("Warning"))
	}
	r = ts.do(t, "PATCH", gadgetsPath+"/a?fieldValidation=Strict", `{"spec":{"other":1}}`, "Content-Type: application/merge-patch+json")
	if st := r.status(t); r.code != http.StatusBadRequest || !strings.Contains(st.Message, `unknown field "spec.other"`) {
		t.Fatalf("patch: %d %q, want 400 naming spec.other", r.code, st.Message)
	}
}

func TestInvalidCustomResourcesAre422WithFieldCauses(t *testing.T) {
	ts := startWithGadgets(t)
	r := ts.do(t, "POST", gadgetsPath, gadget("a", `{"color":"green","size":0}`), "Content-Type: application/json")
	st := r.status(t)
	if r.code != http.StatusUnprocessableEntity || st.Reason != metav1.StatusReasonInvalid || st.Details == nil {
		t.Fatalf("create: %d %s, want 422 Invalid with details", r.code, r.body)
	}
	fields := map[string]bool{}
	for _, c := range st.Details.Causes {
		fields[c.Field] = true
	}
	if !fields["spec.color"] || !fields["spec.size"] {
		t.Errorf("causes = %+v, want spec.color and spec.size", st.Details.Causes)
	}
}
