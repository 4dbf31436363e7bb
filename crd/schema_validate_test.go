package crd

import (
	"context"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// errorStrings renders errs as upstream's Status causes read:
// "<path>: <message>".
func errorStrings(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// wantErrors fails unless errs holds exactly one error per entry of want,
// each containing its entry, in any order (the schema validator walks
// maps in no fixed order).
func wantErrors(t *testing.T, errs field.ErrorList, want ...string) {
	t.Helper()
	got := errorStrings(errs)
	if len(got) != len(want) {
		t.Fatalf("errors = %q, want %d: %q", got, len(want), want)
	}
	used := make([]bool, len(got))
	for _, w := range want {
		found := false
		for i, g := range got {
			if !used[i] && strings.Contains(g, w) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			t.Errorf("errors = %q, want one containing %q", got, w)
		}
	}
}

func TestValidateAcceptsAValidObject(t *testing.T) {
	u := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {size: large, replicas: 3, image: nginx, ports: [{name: http, port: 80}]}}")
	if errs := testVersion(t).Validate(context.Background(), u); len(errs) > 0 {
		t.Fatalf("Validate = %q, want no error", errorStrings(errs))
	}
}

func TestValidateReportsSchemaErrorsWithUpstreamsPathsAndMessages(t *testing.T) {
	u := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {size: huge, replicas: 2, image: a-very-long-image-name-indeed}}")
	wantErrors(t, testVersion(t).Validate(context.Background(), u),
		`spec.size: Unsupported value: "huge": supported values: "small", "large"`,
		`spec.image: Too long: may not be more than 20 bytes`,
		// CEL rules are not run on an object of the wrong shape.
		`some validation rules were not checked because the object was invalid`,
	)
}

func TestValidateReportsTypeErrors(t *testing.T) {
	u := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {replicas: many}}")
	errs := testVersion(t).Validate(context.Background(), u)
	if len(errs) == 0 || errs[0].Type != field.ErrorTypeTypeInvalid || errs[0].Field != "spec.replicas" {
		t.Fatalf("Validate = %q, want spec.replicas: Invalid type first", errorStrings(errs))
	}
}

func TestValidateRefusesAnotherKind(t *testing.T) {
	u := widget(t, "{apiVersion: example.com/v2, kind: Gadget, metadata: {name: w}}")
	wantErrors(t, testVersion(t).Validate(context.Background(), u),
		`kind: Invalid value: "Gadget": must be Widget`,
		`apiVersion: Invalid value: "example.com/v2": must be example.com/v1`,
	)
}

func TestValidateRunsCELRules(t *testing.T) {
	u := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {replicas: 1, minReplicas: 5, maxReplicas: 2}}")
	wantErrors(t, testVersion(t).Validate(context.Background(), u),
		`spec: Invalid value: minReplicas must not exceed maxReplicas`)
}

func TestValidateChecksListMapKeysAreUnique(t *testing.T) {
	u := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {replicas: 1, ports: [{name: a, port: 1}, {name: a, port: 2}]}}")
	wantErrors(t, testVersion(t).Validate(context.Background(), u), `spec.ports[1]: Duplicate value: {"name":"a"}`)
}

func TestValidateChecksEmbeddedResourcesMetadata(t *testing.T) {
	u := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {replicas: 1, template: {kind: ConfigMap, metadata: {name: a/b}}}}")
	wantErrors(t, testVersion(t).Validate(context.Background(), u),
		`spec.template.apiVersion: Required value`,
		`spec.template.metadata.name: Invalid value: "a/b": may not contain '/'`,
		`some validation rules were not checked`)
}

func TestValidateChecksTheScaleReplicas(t *testing.T) {
	u := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {replicas: 3000000000}}")
	wantErrors(t, testVersion(t).Validate(context.Background(), u), `.spec.replicas: Invalid value: 3000000000: should be less than or equal to 2147483647`)
}

func TestValidateUpdateRunsTransitionRules(t *testing.T) {
	v := testVersion(t)
	old := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {replicas: 1, class: gold}}")
	u := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {replicas: 1, class: silver}}")
	wantErrors(t, v.ValidateUpdate(context.Background(), u, old), `spec.class: Invalid value: "silver": class is immutable`)

	same := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {replicas: 2, class: gold}}")
	if errs := v.ValidateUpdate(context.Background(), same, old); len(errs) > 0 {
		t.Fatalf("ValidateUpdate keeping class = %q, want no error", errorStrings(errs))
	}
	// On create there is no oldSelf: the transition rule does not apply.
	if errs := v.Validate(context.Background(), u); len(errs) > 0 {
		t.Fatalf("Validate = %q, want no error", errorStrings(errs))
	}
}

func TestValidateUpdateRatchetsUnchangedInvalidFields(t *testing.T) {
	v := testVersion(t)
	// Stored before the schema limited image to 20 bytes.
	old := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {replicas: 1, image: a-very-long-image-name-indeed}}")
	u := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {replicas: 2, image: a-very-long-image-name-indeed}}")
	if errs := v.ValidateUpdate(context.Background(), u, old); len(errs) > 0 {
		t.Fatalf("ValidateUpdate = %q, want the unchanged field to pass", errorStrings(errs))
	}
	u = widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {replicas: 2, image: another-very-long-image-name}}")
	wantErrors(t, v.ValidateUpdate(context.Background(), u, old), `spec.image: Too long`, `some validation rules were not checked`)
}

func TestValidateStatusUpdateChecksTheStatusSchema(t *testing.T) {
	v := testVersion(t)
	old := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {replicas: 1}}")
	u := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {replicas: 1}, status: {replicas: -1, phase: 3}}")
	wantErrors(t, v.ValidateStatusUpdate(context.Background(), u, old),
		`status.phase: Invalid value: "integer": phase in body must be of type string: "integer"`,
		`.status.replicas: Invalid value: -1: should be a non-negative integer`,
		`some validation rules were not checked`,
	)
}

func TestCELRulesStopAtTheCostLimit(t *testing.T) {
	crd := testCRD(t)
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	// Quadratic in the list's length, and the list has no maxItems: the
	// CRD's validation would refuse this rule; if one gets through, the
	// runtime limit still stops it.
	spec.Properties["tags"] = apiextensionsv1.JSONSchemaProps{
		Type:         "array",
		Items:        &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}},
		XValidations: apiextensionsv1.ValidationRules{{Rule: "self.all(x, self.all(y, x == y || x != y))"}},
	}
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	// A lower limit than CELPerCallLimit is reached as surely, sooner.
	v, err := newVersion(crd, "v1", 10000)
	if err != nil {
		t.Fatal(err)
	}
	tags := make([]any, 100)
	for i := range tags {
		tags[i] = "t"
	}
	u := widget(t, "{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {replicas: 1}}")
	if err := unstructured.SetNestedSlice(u.Object, tags, "spec", "tags"); err != nil {
		t.Fatal(err)
	}
	errs := v.Validate(context.Background(), u)
	if len(errs) == 0 || !strings.Contains(errs[0].Error(), "cost") {
		t.Fatalf("Validate = %q, want the rule stopped by the cost limit", errorStrings(errs))
	}
}
