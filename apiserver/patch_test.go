package apiserver

import (
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The three patch types kubectl sends apply through client-go, in JSON and
// in protobuf: a strategic merge patch merges containers by name instead
// of replacing the list, as a merge patch would.
func TestEveryPatchTypeApplies(t *testing.T) {
	ts := startTestServer(t, newFakeStore())
	for name, cs := range ts.clientsets(t) {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			pods := cs.CoreV1().Pods("default")
			pod := testPod("patched-" + name)
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "sidecar", Image: "busybox"})
			if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Fatalf("create: %v", err)
			}
			if _, err := pods.Patch(ctx, pod.Name, types.MergePatchType, []byte(`{"metadata":{"labels":{"tier":"front"}}}`), metav1.PatchOptions{}); err != nil {
				t.Fatalf("merge patch: %v", err)
			}
			if _, err := pods.Patch(ctx, pod.Name, types.JSONPatchType, []byte(`[{"op":"add","path":"/metadata/annotations","value":{"owner":"lab"}}]`), metav1.PatchOptions{}); err != nil {
				t.Fatalf("JSON patch: %v", err)
			}
			got, err := pods.Patch(ctx, pod.Name, types.StrategicMergePatchType, []byte(`{"spec":{"containers":[{"name":"c","image":"nginx:1.28"}]}}`), metav1.PatchOptions{})
			if err != nil {
				t.Fatalf("strategic merge patch: %v", err)
			}
			if got.Labels["tier"] != "front" || got.Labels["app"] != "web" || got.Annotations["owner"] != "lab" {
				t.Errorf("got labels %v annotations %v, want the merge and JSON patches kept", got.Labels, got.Annotations)
			}
			if len(got.Spec.Containers) != 2 || got.Spec.Containers[0].Image != "nginx:1.28" || got.Spec.Containers[1].Name != "sidecar" {
				t.Errorf("got containers %+v, want c patched to nginx:1.28 and sidecar kept", got.Spec.Containers)
			}
		})
	}
}

// A patch is applied inside the store's compare-and-swap loop: when
// another write lands between the read and the write, the patch is applied
// again to the fresh object and neither change is lost.
func TestPatchIsReappliedOnTheFreshObjectAfterAConcurrentWrite(t *testing.T) {
	store := newFakeStore()
	ts := startTestServer(t, store)
	ctx := testContext(t)
	pods := ts.clientset(t).CoreV1().Pods("default")
	if _, err := pods.Create(ctx, testPod("p"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	store.mu.Lock()
	store.interfere = store.bumpLocked
	store.mu.Unlock()
	got, err := pods.Patch(ctx, "p", types.MergePatchType, []byte(`{"metadata":{"labels":{"tier":"front"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("patch: %v", err)
	}
	if got.Labels["bumped"] != "true" || got.Labels["tier"] != "front" {
		t.Errorf("got labels %v, want both the concurrent write (bumped) and the patch (tier)", got.Labels)
	}
}

// A patch that names a resourceVersion is a precondition: stale, it fails
// with 409 Conflict instead of being retried.
func TestPatchCarryingAStaleResourceVersionConflicts(t *testing.T) {
	ts := startTestServer(t, newFakeStore())
	ctx := testContext(t)
	pods := ts.clientset(t).CoreV1().Pods("default")
	created, err := pods.Create(ctx, testPod("p"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, err := pods.Patch(ctx, "p", types.MergePatchType, []byte(`{"metadata":{"labels":{"v":"2"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch: %v", err)
	}
	stale := []byte(`{"metadata":{"resourceVersion":"` + created.ResourceVersion + `","labels":{"v":"3"}}}`)
	if _, err := pods.Patch(ctx, "p", types.MergePatchType, stale, metav1.PatchOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("got %v, want 409 Conflict", err)
	}
	current, err := pods.Get(ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	fresh := []byte(`{"metadata":{"resourceVersion":"` + current.ResourceVersion + `","labels":{"v":"3"}}}`)
	if got, err := pods.Patch(ctx, "p", types.MergePatchType, fresh, metav1.PatchOptions{}); err != nil || got.Labels["v"] != "3" {
		t.Errorf("patch with the current resourceVersion: got %v, want it applied", err)
	}
}

// A patch that introduces an unknown field follows fieldValidation like
// any write: Strict rejects it, the default warns.
func TestPatchResultIsCheckedForUnknownFields(t *testing.T) {
	ts := startTestServer(t, newFakeStore())
	if _, err := ts.clientset(t).CoreV1().Pods("default").Create(testContext(t), testPod("p"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	patch := `{"spec":{"bogus":true}}`
	resp := ts.do(t, "PATCH", "/api/v1/namespaces/default/pods/p?fieldValidation=Strict", patch, "Content-Type: application/merge-patch+json")
	if status := resp.status(t); status.Code != http.StatusBadRequest || !strings.Contains(status.Message, `unknown field "spec.bogus"`) {
		t.Errorf("Strict: got %d %q, want 400 naming spec.bogus", status.Code, status.Message)
	}
	resp = ts.do(t, "PATCH", "/api/v1/namespaces/default/pods/p", patch, "Content-Type: application/merge-patch+json")
	if resp.code != http.StatusOK || !strings.Contains(resp.header.Get("Warning"), `unknown field \"spec.bogus\"`) {
		t.Errorf("default: got %d with Warning %q, want 200 and a warning", resp.code, resp.header.Get("Warning"))
	}
}
