package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	autoscalingv1ac "k8s.io/client-go/applyconfigurations/autoscaling/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/rest"

	"minicp/e2e/framework"
	"minicp/registry"
)

// entryOf returns the managedFields entry of manager, failing the test
// when there is none.
func entryOf(t *testing.T, entries []metav1.ManagedFieldsEntry, manager string, op metav1.ManagedFieldsOperationType) metav1.ManagedFieldsEntry {
	t.Helper()
	for _, e := range entries {
		if e.Manager == manager && e.Operation == op {
			return e
		}
	}
	t.Fatalf("no managedFields entry for manager %q operation %s; entries: %+v", manager, op, entries)
	return metav1.ManagedFieldsEntry{}
}

// owns reports whether entry's field set names field (a FieldsV1 key such
// as `f:mode`).
func owns(entry metav1.ManagedFieldsEntry, field string) bool {
	return entry.FieldsV1 != nil && strings.Contains(string(entry.FieldsV1.Raw), `"`+field+`"`)
}

// Every write records its manager: create, update and each patch type
// through client-go, with the manager from fieldManager or, without one,
// from the User-Agent; and the entries are stored in etcd with the object.
func TestEveryWriteRecordsManagedFields(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, time.Minute)
	cms := s.Clientset.CoreV1().ConfigMaps("default")

	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"mode": "a"}},
		metav1.CreateOptions{FieldManager: "creator"})
	if err != nil {
		t.Fatal(err)
	}
	created := entryOf(t, cm.ManagedFields, "creator", metav1.ManagedFieldsOperationUpdate)
	if !owns(created, "f:mode") || created.APIVersion != "v1" || created.FieldsType != "FieldsV1" || created.Time == nil {
		t.Errorf("create entry = %+v, want v1 FieldsV1 owning f:mode with a time", created)
	}

	cm.Data["level"] = "1"
	if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "updater"}); err != nil {
		t.Fatal(err)
	}
	if e := entryOf(t, cm.ManagedFields, "updater", metav1.ManagedFieldsOperationUpdate); !owns(e, "f:level") || owns(e, "f:mode") {
		t.Errorf("update entry = %s, want f:level only", e.FieldsV1.Raw)
	}

	patches := []struct {
		manager string
		pt      types.PatchType
		body    string
		field   string
	}{
		{"merge-patcher", types.MergePatchType, `{"data":{"merge":"x"}}`, "f:merge"},
		{"json-patcher", types.JSONPatchType, `[{"op":"add","path":"/data/json","value":"y"}]`, "f:json"},
		{"strategic-patcher", types.StrategicMergePatchType, `{"data":{"strategic":"z"}}`, "f:strategic"},
	}
	for _, p := range patches {
		if cm, err = cms.Patch(ctx, "settings", p.pt, []byte(p.body), metav1.PatchOptions{FieldManager: p.manager}); err != nil {
			t.Fatalf("%s: %v", p.pt, err)
		}
		if e := entryOf(t, cm.ManagedFields, p.manager, metav1.ManagedFieldsOperationUpdate); !owns(e, p.field) {
			t.Errorf("%s entry = %s, want %s", p.pt, e.FieldsV1.Raw, p.field)
		}
	}

	// No fieldManager: the User-Agent's product, the test binary's name
	// ("e2e.test" under go test).
	if cm, err = cms.Patch(ctx, "settings", types.MergePatchType, []byte(`{"data":{"anonymous":"1"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	binary, _, _ := strings.Cut(rest.DefaultKubernetesUserAgent(), "/")
	if e := entryOf(t, cm.ManagedFields, binary, metav1.ManagedFieldsOperationUpdate); !owns(e, "f:anonymous") {
		t.Errorf("User-Agent entry = %s, want f:anonymous", e.FieldsV1.Raw)
	}

	// The entries are part of the stored object.
	resp, err := s.Etcd.Get(ctx, "/registry/configmaps/default/settings")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("etcd get: %v, %d keys", err, len(resp.Kvs))
	}
	var stored corev1.ConfigMap
	if err := decodeStored(resp.Kvs[0].Value, &stored); err != nil {
		t.Fatal(err)
	}
	if len(stored.ManagedFields) != len(cm.ManagedFields) {
		t.Errorf("etcd holds %d managedFields entries, the API answered %d", len(stored.ManagedFields), len(cm.ManagedFields))
	}
	entryOf(t, stored.ManagedFields, "creator", metav1.ManagedFieldsOperationUpdate)

	// A write that sends managedFields: [{}] strips them all, as upstream
	// does (a JSON [] would do too, but client-go leaves an empty list
	// out); tracking starts again with the next apply or create.
	cm.ManagedFields = []metav1.ManagedFieldsEntry{{}}
	cm.Data["reset"] = "1"
	if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "resetter"}); err != nil {
		t.Fatal(err)
	}
	if len(cm.ManagedFields) != 0 {
		t.Errorf("after a reset, managedFields = %+v, want none", cm.ManagedFields)
	}
}

// decodeStored decodes a stored protobuf value with minicp's codecs.
func decodeStored(data []byte, into *corev1.ConfigMap) error {
	_, _, err := registry.Codecs.UniversalDeserializer().Decode(data, nil, into)
	return err
}

// Server-side apply with client-go's apply configurations: create, a
// second manager's conflict (409 naming the manager and field), force.
func TestClientGoApplyConflictsAndForce(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, time.Minute)
	cms := s.Clientset.CoreV1().ConfigMaps("default")

	cm, err := cms.Apply(ctx, corev1ac.ConfigMap("settings", "default").WithData(map[string]string{"mode": "a"}),
		metav1.ApplyOptions{FieldManager: "alice"})
	if err != nil {
		t.Fatalf("apply creating the object: %v", err)
	}
	if e := entryOf(t, cm.ManagedFields, "alice", metav1.ManagedFieldsOperationApply); !owns(e, "f:mode") {
		t.Errorf("apply entry = %s, want f:mode", e.FieldsV1.Raw)
	}

	_, err = cms.Apply(ctx, corev1ac.ConfigMap("settings", "default").WithData(map[string]string{"mode": "b"}),
		metav1.ApplyOptions{FieldManager: "bob"})
	if !apierrors.IsConflict(err) {
		t.Fatalf("bob's apply of alice's field: got %v, want 409 Conflict", err)
	}
	status := err.(apierrors.APIStatus).Status()
	if status.Details == nil || len(status.Details.Causes) != 1 {
		t.Fatalf("conflict details = %+v, want one cause", status.Details)
	}
	cause := status.Details.Causes[0]
	if cause.Type != metav1.CauseTypeFieldManagerConflict || cause.Field != ".data.mode" || !strings.Contains(cause.Message, `"alice"`) {
		t.Errorf("cause = %+v, want a FieldManagerConflict on .data.mode naming alice", cause)
	}
	if want := `Apply failed with 1 conflict: conflict with "alice": .data.mode`; status.Message != want {
		t.Errorf("message = %q, want %q", status.Message, want)
	}

	cm, err = cms.Apply(ctx, corev1ac.ConfigMap("settings", "default").WithData(map[string]string{"mode": "b"}),
		metav1.ApplyOptions{FieldManager: "bob", Force: true})
	if err != nil {
		t.Fatalf("forced apply: %v", err)
	}
	if cm.Data["mode"] != "b" {
		t.Errorf("mode = %q after bob's forced apply, want b", cm.Data["mode"])
	}
	if e := entryOf(t, cm.ManagedFields, "bob", metav1.ManagedFieldsOperationApply); !owns(e, "f:mode") {
		t.Errorf("bob's entry = %s, want f:mode", e.FieldsV1.Raw)
	}
	for _, e := range cm.ManagedFields {
		if e.Manager == "alice" {
			t.Errorf("alice still has an entry after losing her only field: %+v", e)
		}
	}

	// A field the manager applied before and leaves out now is removed.
	cm, err = cms.Apply(ctx, corev1ac.ConfigMap("settings", "default").WithData(map[string]string{"level": "1"}),
		metav1.ApplyOptions{FieldManager: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cm.Data["mode"]; ok || cm.Data["level"] != "1" {
		t.Errorf("data = %v after bob applied only level, want mode removed", cm.Data)
	}
}

// Apply through the status and scale subresources records the
// subresource in the entry, and a Scale write owns spec.replicas.
func TestApplyStatusAndScaleSubresources(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, time.Minute)
	deploys := s.Clientset.AppsV1().Deployments("default")

	labels := map[string]string{"app": "web"}
	d := appsv1ac.Deployment("web", "default").WithSpec(appsv1ac.DeploymentSpec().
		WithReplicas(1).
		WithSelector(metav1ApplySelector(labels)).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).
			WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("web").WithImage("nginx")))))
	if _, err := deploys.Apply(ctx, d, metav1.ApplyOptions{FieldManager: "deployer"}); err != nil {
		t.Fatal(err)
	}

	st, err := deploys.ApplyStatus(ctx, appsv1ac.Deployment("web", "default").WithStatus(appsv1ac.DeploymentStatus().WithObservedGeneration(1)),
		metav1.ApplyOptions{FieldManager: "controller", Force: true})
	if err != nil {
		t.Fatalf("apply status: %v", err)
	}
	if e := entryOf(t, st.ManagedFields, "controller", metav1.ManagedFieldsOperationApply); e.Subresource != "status" || !owns(e, "f:observedGeneration") {
		t.Errorf("status entry = %+v, want subresource status owning f:observedGeneration", e)
	}

	if _, err := deploys.ApplyScale(ctx, "web", autoscalingv1ac.Scale().WithSpec(autoscalingv1ac.ScaleSpec().WithReplicas(3)),
		metav1.ApplyOptions{FieldManager: "scaler"}); !apierrors.IsConflict(err) {
		t.Fatalf("scaling a field the deployer applied: got %v, want 409 Conflict", err)
	}
	if _, err := deploys.ApplyScale(ctx, "web", autoscalingv1ac.Scale().WithSpec(autoscalingv1ac.ScaleSpec().WithReplicas(3)),
		metav1.ApplyOptions{FieldManager: "scaler", Force: true}); err != nil {
		t.Fatalf("forced scale apply: %v", err)
	}
	got, err := deploys.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *got.Spec.Replicas != 3 {
		t.Errorf("replicas = %d, want 3", *got.Spec.Replicas)
	}
	if e := entryOf(t, got.ManagedFields, "scaler", metav1.ManagedFieldsOperationApply); e.Subresource != "scale" || e.APIVersion != "apps/v1" || !owns(e, "f:replicas") {
		t.Errorf("scale entry = %+v, want subresource scale, apps/v1, owning f:replicas", e)
	}
	if e := entryOf(t, got.ManagedFields, "deployer", metav1.ManagedFieldsOperationApply); owns(e, "f:replicas") {
		t.Errorf("deployer still owns replicas after the forced scale: %s", e.FieldsV1.Raw)
	}

	// Apply does not create through a subresource.
	_, err = s.Clientset.AppsV1().Deployments("default").ApplyStatus(ctx,
		appsv1ac.Deployment("missing", "default").WithStatus(appsv1ac.DeploymentStatus().WithReplicas(1)), metav1.ApplyOptions{FieldManager: "controller"})
	if !apierrors.IsNotFound(err) {
		t.Errorf("status apply of a missing object: got %v, want 404", err)
	}
}

func metav1ApplySelector(labels map[string]string) *metav1ac.LabelSelectorApplyConfiguration {
	return metav1ac.LabelSelector().WithMatchLabels(labels)
}
