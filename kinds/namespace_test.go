package kinds

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"minicp/registry"
)

func namespacesResource(t *testing.T) *registry.Resource {
	return mustResource(t, corev1.SchemeGroupVersion, "namespaces")
}

// The namespace lifecycle: DELETE marks, finalize removes.
func TestDeletingANamespaceMarksItTerminatingUntilFinalized(t *testing.T) {
	s, client := newTestStore(t, registry.Options{})
	ctx := testContext(t)
	nsRes := namespacesResource(t)
	createNamespace(t, s, "lab")

	out, err := s.Delete(ctx, nsRes, "", "lab", registry.DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns := out.(*corev1.Namespace)
	if ns.DeletionTimestamp == nil || ns.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("after DELETE: deletionTimestamp %v phase %q, want set and Terminating", ns.DeletionTimestamp, ns.Status.Phase)
	}
	stored, err := s.Get(ctx, nsRes, "", "lab", registry.GetOptions{})
	if err != nil || stored.(*corev1.Namespace).Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("stored namespace after DELETE: %v %v, want it Terminating", stored, err)
	}

	// A second DELETE while the finalizer is there changes nothing.
	again, err := s.Delete(ctx, nsRes, "", "lab", registry.DeleteOptions{})
	if err != nil || rvOf(t, again.(*corev1.Namespace)) != rvOf(t, ns) {
		t.Fatalf("second DELETE: %v %v, want the unchanged namespace", again, err)
	}

	// A main update cannot drop the finalizer; the finalize subresource can.
	dropFinalizers := func(cur runtime.Object) (runtime.Object, error) {
		cur.(*corev1.Namespace).Spec.Finalizers = nil
		return cur, nil
	}
	kept, _, err := s.Update(ctx, nsRes, "", "lab", registry.UpdateOptions{}, dropFinalizers)
	if err != nil || len(kept.(*corev1.Namespace).Spec.Finalizers) != 1 {
		t.Fatalf("main update: %v %v, want the finalizer kept", kept, err)
	}
	finalized, _, err := s.Update(ctx, nsRes, "", "lab", registry.UpdateOptions{Subresource: "finalize"}, dropFinalizers)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Get(ctx, registry.KeyFor(nsRes, "", "lab"))
	if err != nil || len(resp.Kvs) != 0 {
		t.Fatalf("key after finalize: %v %v, want it deleted", resp.Kvs, err)
	}
	if rvOf(t, finalized.(*corev1.Namespace)) != resp.Header.Revision {
		t.Errorf("finalize answered at revision %d, want the deletion's %d", rvOf(t, finalized.(*corev1.Namespace)), resp.Header.Revision)
	}
	if _, err := s.Get(ctx, nsRes, "", "lab", registry.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get after finalize: got %v, want 404", err)
	}
}

func TestANamespaceWithoutFinalizersIsDeletedAtOnce(t *testing.T) {
	s, client := newTestStore(t, registry.Options{})
	ctx := testContext(t)
	nsRes := namespacesResource(t)
	createNamespace(t, s, "old")
	// A namespace stored before finalizers were added.
	if _, _, err := s.Update(ctx, nsRes, "", "old", registry.UpdateOptions{Subresource: "finalize"}, func(cur runtime.Object) (runtime.Object, error) {
		cur.(*corev1.Namespace).Spec.Finalizers = nil
		return cur, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, nsRes, "", "old", registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if resp, err := client.Get(ctx, registry.KeyFor(nsRes, "", "old")); err != nil || len(resp.Kvs) != 0 {
		t.Errorf("key after DELETE: %v %v, want it deleted", resp.Kvs, err)
	}
}

func TestFinalizeIsOnlyForNamespaces(t *testing.T) {
	s, _ := newTestStore(t, registry.Options{})
	createPod(t, s, newPod("web"))
	_, _, err := s.Update(testContext(t), podsResource(t), "default", "web", registry.UpdateOptions{Subresource: "finalize"}, func(cur runtime.Object) (runtime.Object, error) {
		return cur, nil
	})
	if !apierrors.IsNotFound(err) {
		t.Errorf("finalize on a pod: got %v, want 404", err)
	}
}

func TestDryRunDeleteOfANamespaceChangesNothing(t *testing.T) {
	s, _ := newTestStore(t, registry.Options{})
	ctx := testContext(t)
	createNamespace(t, s, "lab")
	out, err := s.Delete(ctx, namespacesResource(t), "", "lab", registry.DeleteOptions{DryRun: true})
	if err != nil || out.(*corev1.Namespace).Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("dry-run DELETE: %v %v, want the namespace as it would be marked", out, err)
	}
	stored, err := s.Get(ctx, namespacesResource(t), "", "lab", registry.GetOptions{})
	if err != nil || stored.(*corev1.Namespace).DeletionTimestamp != nil {
		t.Errorf("stored after dry-run: %+v %v, want untouched", stored.(*corev1.Namespace).ObjectMeta, err)
	}
}
