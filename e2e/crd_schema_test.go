package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"minicp/e2e/framework"
	"minicp/internal/testsupport"
)

// widgetsCRD has a schema with every rule the schema code applies: an
// enum with a default, a bounded integer with a default, a length limit,
// a preserved subtree, a CEL rule across fields and a transition rule.
const widgetsCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.schema.example.com}
spec:
  group: schema.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    schema:
      openAPIV3Schema:
        type: object
        description: A Widget is a thing the schema lab shapes.
        properties:
          spec:
            type: object
            description: what the widget should be
            x-kubernetes-validations:
            - rule: "!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas"
              message: minReplicas must not exceed maxReplicas
            properties:
              size: {type: string, enum: [small, large], default: small, description: how big the widget is}
              replicas: {type: integer, minimum: 0, maximum: 10, default: 1}
              minReplicas: {type: integer}
              maxReplicas: {type: integer}
              image: {type: string, maxLength: 20}
              class:
                type: string
                x-kubernetes-validations: [{rule: "self == oldSelf", message: class is immutable}]
              config: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status:
            type: object
            properties:
              phase: {type: string, enum: [Pending, Ready]}
              replicas: {type: integer}
`

var widgetsV1 = schema.GroupVersionResource{Group: "schema.example.com", Version: "v1", Resource: "widgets"}

// warningRecorder keeps the warnings a client receives.
type warningRecorder struct {
	mu       sync.Mutex // guards warnings
	warnings []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warnings = append(w.warnings, text)
}

func (w *warningRecorder) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.warnings...)
}

// installWidgets installs widgetsCRD and waits until Widgets are served;
// warnings, when not nil, receives the warnings of the Widgets client.
func installWidgets(t *testing.T, s *framework.Stack, warnings *warningRecorder) dynamic.NamespaceableResourceInterface {
	t.Helper()
	ctx := framework.Context(t, time.Minute)
	installCRD(t, ctx, clientset.NewForConfigOrDie(s.RESTConfig), testsupport.DecodeCRD(t, widgetsCRD))
	cfg := rest.CopyConfig(s.RESTConfig)
	if warnings != nil {
		cfg.WarningHandler = warnings
	}
	widgets := dynamic.NewForConfigOrDie(cfg).Resource(widgetsV1)
	framework.Eventually(t, framework.StateTimeout, "Widgets to be served", func() bool {
		_, err := widgets.Namespace("default").List(ctx, metav1.ListOptions{})
		return err == nil
	})
	return widgets
}

func widgetObject(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	js, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if err := u.UnmarshalJSON(js); err != nil {
		t.Fatal(err)
	}
	return u
}

// invalidFields returns the fields of a 422's causes, failing unless err
// is one.
func invalidFields(t *testing.T, err error) map[string]string {
	t.Helper()
	status, ok := err.(apierrors.APIStatus)
	if !ok || !apierrors.IsInvalid(err) || status.Status().Details == nil {
		t.Fatalf("got %v, want 422 Invalid with causes", err)
	}
	fields := map[string]string{}
	for _, c := range status.Status().Details.Causes {
		fields[c.Field] = c.Message
	}
	return fields
}

// A Widget is pruned, defaulted and validated by its CRD's schema on
// every write: unknown fields go, defaults appear, invalid values are 422
// with one cause per field, CEL rules and transition rules hold, and the
// status subresource checks the status schema.
func TestCustomResourcesFollowTheirSchema(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, time.Minute)
	warnings := &warningRecorder{}
	widgets := installWidgets(t, s, warnings).Namespace("default")

	created, err := widgets.Create(ctx, widgetObject(t, `{apiVersion: schema.example.com/v1, kind: Widget, metadata: {name: a},
	  spec: {class: gold, bogus: 1, config: {anything: kept}}}`), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	spec, _, _ := unstructured.NestedMap(created.Object, "spec")
	if _, found := spec["bogus"]; found {
		t.Errorf("spec.bogus was stored: %v", spec)
	}
	// fieldValidation defaults to Warn.
	if got := warnings.all(); !slices.Contains(got, `unknown field "spec.bogus"`) {
		t.Errorf("warnings = %q, want one naming spec.bogus", got)
	}
	if spec["size"] != "small" || spec["replicas"] != int64(1) {
		t.Errorf("spec = %v, want the defaults size small and replicas 1", spec)
	}
	if got, _, _ := unstructured.NestedString(created.Object, "spec", "config", "anything"); got != "kept" {
		t.Errorf("spec.config.anything = %q, want it preserved", got)
	}

	_, err = widgets.Create(ctx, widgetObject(t, `{apiVersion: schema.example.com/v1, kind: Widget, metadata: {name: b},
	  spec: {size: huge, image: a-very-long-image-name-indeed}}`), metav1.CreateOptions{})
	fields := invalidFields(t, err)
	if !strings.Contains(fields["spec.size"], `supported values: "small", "large"`) || !strings.Contains(fields["spec.image"], "may not be more than 20 bytes") {
		t.Errorf("causes = %v, want spec.size and spec.image", fields)
	}

	// metadata is checked as every kind's is: the name is a DNS subdomain.
	_, err = widgets.Create(ctx, widgetObject(t, `{apiVersion: schema.example.com/v1, kind: Widget, metadata: {name: Not_A_Name}, spec: {}}`), metav1.CreateOptions{})
	if msg := invalidFields(t, err)["metadata.name"]; !strings.Contains(msg, "RFC 1123 subdomain") {
		t.Errorf("cause on metadata.name = %q", msg)
	}

	_, err = widgets.Create(ctx, widgetObject(t, `{apiVersion: schema.example.com/v1, kind: Widget, metadata: {name: c},
	  spec: {minReplicas: 5, maxReplicas: 2}}`), metav1.CreateOptions{})
	if msg := invalidFields(t, err)["spec"]; !strings.Contains(msg, "minReplicas must not exceed maxReplicas") {
		t.Errorf("CEL cause on spec = %q", msg)
	}

	changed := created.DeepCopy()
	unstructured.SetNestedField(changed.Object, "silver", "spec", "class")
	_, err = widgets.Update(ctx, changed, metav1.UpdateOptions{})
	if msg := invalidFields(t, err)["spec.class"]; !strings.Contains(msg, "class is immutable") {
		t.Errorf("transition rule cause on spec.class = %q", msg)
	}

	// A spec change bumps the generation; a status write does not, and
	// is checked against the status schema only.
	scaled := created.DeepCopy()
	unstructured.SetNestedField(scaled.Object, int64(3), "spec", "replicas")
	updated, err := widgets.Update(ctx, scaled, metav1.UpdateOptions{})
	if err != nil || updated.GetGeneration() != 2 {
		t.Fatalf("spec update: generation %d, %v; want 2", updated.GetGeneration(), err)
	}
	unstructured.SetNestedField(updated.Object, "Broken", "status", "phase")
	_, err = widgets.UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if msg := invalidFields(t, err)["status.phase"]; !strings.Contains(msg, `supported values: "Pending", "Ready"`) {
		t.Errorf("status cause = %q", msg)
	}
	unstructured.SetNestedField(updated.Object, "Ready", "status", "phase")
	unstructured.SetNestedField(updated.Object, int64(9), "spec", "replicas")
	got, err := widgets.UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("status update: %v", err)
	}
	if replicas, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); replicas != 3 || got.GetGeneration() != 2 {
		t.Errorf("after a status update: spec.replicas %d, generation %d; want 3 and 2 (status writes only status)", replicas, got.GetGeneration())
	}
}

// kubectl explains a custom resource from its CRD's schema, and its
// field validation (Strict, once it finds the PATCH operation in the
// OpenAPI v3 document) refuses a manifest with an unknown field.
func TestKubectlExplainsAndStrictlyValidatesCustomResources(t *testing.T) {
	requireKubectl(t)
	s := framework.Start(t, framework.Options{})
	installWidgets(t, s, nil)

	var out string
	framework.Eventually(t, framework.StateTimeout, "kubectl explain to know Widgets", func() bool {
		var err error
		out, err = kubectlErr(t, s, "explain", "widgets.spec")
		return err == nil
	})
	assertContains(t, "kubectl explain widgets.spec", out, "KIND:       Widget", "what the widget should be", "size\t<string>", "how big the widget is")

	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	manifest := "apiVersion: schema.example.com/v1\nkind: Widget\nmetadata: {name: strict, namespace: default}\nspec: {size: large, bogus: 1}\n"
	if err := os.WriteFile(bad, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := kubectlErr(t, s, "create", "-f", bad)
	if err == nil {
		t.Fatalf("kubectl create with an unknown field succeeded:\n%s", out)
	}
	assertContains(t, "kubectl create with an unknown field", out, `strict decoding error: unknown field "spec.bogus"`)

	out = kubectl(t, s, "create", "-f", bad, "--validate=false")
	assertContains(t, "kubectl create --validate=false", out, "widget.schema.example.com/strict created")
	out = kubectl(t, s, "get", "widget", "strict", "-n", "default", "-o", "jsonpath={.spec}")
	if strings.Contains(out, "bogus") || !strings.Contains(out, `"replicas":1`) {
		t.Errorf("stored spec = %s, want it pruned and defaulted", out)
	}
}

// A schema change takes effect without a restart: objects written before
// it are read with the new schema's defaults, OpenAPI describes the new
// field, and new writes follow it.
func TestASchemaChangeAppliesToStoredCustomResources(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, time.Minute)
	widgets := installWidgets(t, s, nil).Namespace("default")
	if _, err := widgets.Create(ctx, widgetObject(t, `{apiVersion: schema.example.com/v1, kind: Widget, metadata: {name: old}, spec: {size: large}}`), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	ext := clientset.NewForConfigOrDie(s.RESTConfig)
	crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "widgets.schema.example.com", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	spec.Properties["color"] = apiextensionsv1.JSONSchemaProps{Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"blue"`)}}
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating the CRD: %v", err)
	}

	framework.Eventually(t, framework.StateTimeout, "the stored Widget to be read with the new default", func() bool {
		got, err := widgets.Get(ctx, "old", metav1.GetOptions{})
		if err != nil {
			return false
		}
		color, _, _ := unstructured.NestedString(got.Object, "spec", "color")
		return color == "blue"
	})
	// The OpenAPI document of the group-version describes the new field.
	disco := discovery.NewDiscoveryClientForConfigOrDie(s.RESTConfig)
	framework.Eventually(t, framework.StateTimeout, "/openapi/v3 to describe spec.color", func() bool {
		paths, err := disco.OpenAPIV3().Paths()
		if err != nil || paths["apis/schema.example.com/v1"] == nil {
			return false
		}
		doc, err := paths["apis/schema.example.com/v1"].Schema("application/json")
		return err == nil && strings.Contains(string(doc), `"color":{"type":"string","default":"blue"}`)
	})
	created, err := widgets.Create(ctx, widgetObject(t, `{apiVersion: schema.example.com/v1, kind: Widget, metadata: {name: new}, spec: {}}`), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if color, _, _ := unstructured.NestedString(created.Object, "spec", "color"); color != "blue" {
		t.Errorf("a new Widget's spec.color = %q, want the new default blue", color)
	}
}

// The scale subresource writes spec.replicas through the same schema: a
// scale beyond the schema's maximum is 422 on spec.replicas.
func TestScalingACustomResourceFollowsItsSchema(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, time.Minute)
	widgets := installWidgets(t, s, nil).Namespace("default")
	if _, err := widgets.Create(ctx, widgetObject(t, `{apiVersion: schema.example.com/v1, kind: Widget, metadata: {name: a}, spec: {}}`), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	scale := func(replicas int) error {
		patch := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
		_, err := widgets.Patch(ctx, "a", types.MergePatchType, patch, metav1.PatchOptions{}, "scale")
		return err
	}
	if err := scale(4); err != nil {
		t.Fatalf("scaling to 4: %v", err)
	}
	if msg := invalidFields(t, scale(20))["spec.replicas"]; !strings.Contains(msg, "should be less than or equal to 10") {
		t.Errorf("scaling to 20: cause on spec.replicas = %q", msg)
	}
	got, err := widgets.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if replicas, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); replicas != 4 || got.GetGeneration() != 2 {
		t.Errorf("spec.replicas %d, generation %d; want 4 and 2", replicas, got.GetGeneration())
	}
}
