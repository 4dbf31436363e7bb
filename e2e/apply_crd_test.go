package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/e2e/framework"
)

// Server-side apply on a custom resource, with client-go's dynamic
// client: two managers, the conflict naming the first, force; the
// entries are in the JSON etcd holds. The CRD itself records its
// creator too.
func TestApplyToCustomResources(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	widgets := installWidgets(t, s, nil).Namespace("default")
	ctx := framework.Context(t, 30*time.Second)

	crd, err := clientset.NewForConfigOrDie(s.RESTConfig).ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "widgets.schema.example.com", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(crd.ManagedFields) == 0 {
		t.Errorf("the CRD has no managedFields")
	}

	apply := func(manager string, force bool, doc string) error {
		_, err := widgets.Apply(ctx, "w", widgetObject(t, doc), metav1.ApplyOptions{FieldManager: manager, Force: force})
		return err
	}
	if err := apply("alice", false, "apiVersion: schema.example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: large, replicas: 2}\n"); err != nil {
		t.Fatalf("alice's apply creating the widget: %v", err)
	}
	err = apply("bob", false, "apiVersion: schema.example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {replicas: 3}\n")
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `conflict with "alice": .spec.replicas`) {
		t.Fatalf("bob's apply of alice's replicas: got %v, want 409 naming alice and .spec.replicas", err)
	}
	if err := apply("bob", true, "apiVersion: schema.example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {replicas: 3}\n"); err != nil {
		t.Fatalf("bob's forced apply: %v", err)
	}
	w, err := widgets.Get(ctx, "w", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	managers := managersOf(w.GetManagedFields())
	if !managers["alice"] || !managers["bob"] {
		t.Errorf("managers = %v, want alice (size) and bob (replicas)", managers)
	}

	resp, err := s.Etcd.Get(ctx, "/registry/schema.example.com/widgets/default/w")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("etcd get: %v", err)
	}
	if stored := string(resp.Kvs[0].Value); !strings.Contains(stored, `"managedFields":[`) || !strings.Contains(stored, `"manager":"bob","operation":"Apply"`) {
		t.Errorf("the stored JSON does not carry bob's Apply entry:\n%s", stored)
	}
}

// `kubectl apply --server-side` on a custom resource, a conflict between
// two managers and --force-conflicts.
func TestKubectlServerSideApplyToACustomResource(t *testing.T) {
	requireKubectl(t)
	s := framework.Start(t, framework.Options{})
	installWidgets(t, s, nil)
	dir := t.TempDir()
	write := func(replicas string) string {
		path := filepath.Join(dir, "w-"+replicas+".yaml")
		doc := "apiVersion: schema.example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {replicas: " + replicas + "}\n"
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	assertContains(t, "apply --server-side", kubectl(t, s, "apply", "--server-side", "-f", write("2")), "widget.schema.example.com/w serverside-applied")
	out, err := kubectlErr(t, s, "apply", "--server-side", "--field-manager", "ops", "-f", write("4"))
	if err == nil {
		t.Fatalf("ops's apply of kubectl's field succeeded:\n%s", out)
	}
	assertContains(t, "conflicting apply", out, `conflict with "kubectl"`, ".spec.replicas")
	kubectl(t, s, "apply", "--server-side", "--field-manager", "ops", "--force-conflicts", "-f", write("4"))
	assertContains(t, "get --show-managed-fields", kubectl(t, s, "get", "widget", "w", "-o", "yaml", "--show-managed-fields"),
		"manager: ops", "operation: Apply", "replicas: 4")
}
