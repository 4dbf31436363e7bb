package mirror

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"minicp/e2e/framework"
)

// controller-runtime's server-side apply: client.Apply with an apply
// configuration creates the object and records its field owner; another
// owner's apply of the same field is a 409 Conflict naming the first,
// client.ForceOwnership takes the field over, and the status
// subresource's Apply records the subresource.
func TestClientApplyOwnsFieldsAndConflicts(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, 60*time.Second)
	c, err := client.New(s.RESTConfig, client.Options{})
	if err != nil {
		t.Fatal(err)
	}

	settings := func(mode string) *corev1ac.ConfigMapApplyConfiguration {
		return corev1ac.ConfigMap("settings", "default").WithData(map[string]string{"mode": mode})
	}
	if err := c.Apply(ctx, settings("fast"), client.FieldOwner("operator")); err != nil {
		t.Fatalf("client.Apply creating the object: %v", err)
	}
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "settings"}, &cm); err != nil {
		t.Fatal(err)
	}
	if !hasEntry(cm.ManagedFields, "operator", metav1.ManagedFieldsOperationApply, "") {
		t.Errorf("managedFields = %+v, want an Apply entry of operator", cm.ManagedFields)
	}

	err = c.Apply(ctx, settings("safe"), client.FieldOwner("intruder"))
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `conflict with "operator"`) {
		t.Fatalf("another owner's apply of the same field: got %v, want 409 Conflict naming operator", err)
	}
	if err := c.Apply(ctx, settings("safe"), client.FieldOwner("intruder"), client.ForceOwnership); err != nil {
		t.Fatalf("forced apply: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(&cm), &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["mode"] != "safe" || !hasEntry(cm.ManagedFields, "intruder", metav1.ManagedFieldsOperationApply, "") {
		t.Errorf("after the forced apply: data %v, managedFields %+v; want mode safe owned by intruder", cm.Data, cm.ManagedFields)
	}

	labels := map[string]string{"app": "web"}
	deploy := appsv1ac.Deployment("web", "default").WithSpec(appsv1ac.DeploymentSpec().
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).
			WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("web").WithImage("nginx")))))
	if err := c.Apply(ctx, deploy, client.FieldOwner("operator")); err != nil {
		t.Fatalf("applying a deployment: %v", err)
	}
	status := appsv1ac.Deployment("web", "default").WithStatus(appsv1ac.DeploymentStatus().WithObservedGeneration(1))
	if err := c.Status().Apply(ctx, status, client.FieldOwner("operator-status"), client.ForceOwnership); err != nil {
		t.Fatalf("applying the deployment's status: %v", err)
	}
	u := &metav1.PartialObjectMetadata{}
	u.SetGroupVersionKind(schemaDeployment)
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, u); err != nil {
		t.Fatal(err)
	}
	if !hasEntry(u.ManagedFields, "operator-status", metav1.ManagedFieldsOperationApply, "status") {
		t.Errorf("managedFields = %+v, want an Apply entry of operator-status on the status subresource", u.ManagedFields)
	}
}

var schemaDeployment = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}

func hasEntry(entries []metav1.ManagedFieldsEntry, manager string, op metav1.ManagedFieldsOperationType, subresource string) bool {
	for _, e := range entries {
		if e.Manager == manager && e.Operation == op && e.Subresource == subresource {
			return true
		}
	}
	return false
}
