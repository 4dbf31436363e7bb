package apiserver

import (
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A duplicate field in an applied configuration is what only a strict
// parse finds: under fieldValidation=Warn (the default) the apply goes
// through with a warning naming it, the later value winning; under
// Ignore it goes through silently (Strict's 400 is in errors_test.go).
// The warning's text spans two lines, which a Warning header cannot
// carry, so it stays in the applier: upstream drops it the same way.
func TestApplyDuplicateFieldsFollowFieldValidation(t *testing.T) {
	ts := startTestServer(t, newFakeStore())
	if r := ts.do(t, "POST", configMapsPath, `{"metadata":{"name":"c"}}`, "Content-Type: application/json"); r.code != http.StatusCreated {
		t.Fatalf("create: %d %s", r.code, r.body)
	}
	res, _ := testResources.Lookup(corev1.SchemeGroupVersion.WithResource("configmaps"))
	fm, err := fieldManagerFor(res, "")
	if err != nil {
		t.Fatal(err)
	}
	config := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: first\n  a: second\n"
	for _, tc := range []struct {
		validation  string
		wantWarning bool
	}{{metav1.FieldValidationWarn, true}, {metav1.FieldValidationIgnore, false}} {
		r := ts.do(t, "PATCH", configMapsPath+"/c?fieldManager=me&fieldValidation="+tc.validation, config, applyYAML)
		if r.code != http.StatusOK {
			t.Fatalf("fieldValidation=%s: got %d %s, want 200", tc.validation, r.code, r.body)
		}
		if cm := decodeConfigMap(t, r); cm.Data["a"] != "second" {
			t.Errorf("fieldValidation=%s: got data %v, want a: second", tc.validation, cm.Data)
		}
		opts := metav1.PatchOptions{FieldManager: "me", FieldValidation: tc.validation}
		a, err := newApplier(res, &requestInfo{namespace: "default", name: "c"}, fm, opts, []byte(config))
		if err != nil {
			t.Fatalf("fieldValidation=%s: %v", tc.validation, err)
		}
		warned := len(a.lastWarnings()) == 1 && strings.Contains(a.lastWarnings()[0], `key "a" already set in map`)
		if warned != tc.wantWarning || a.config["data"].(map[string]any)["a"] != "second" {
			t.Errorf("fieldValidation=%s: got warnings %q and %v, want a warning naming the key: %v, and a: second", tc.validation, a.lastWarnings(), a.config, tc.wantWarning)
		}
	}
}
