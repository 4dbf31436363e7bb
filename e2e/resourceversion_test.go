package e2e

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/e2e/framework"
)

// M4: resourceVersion is the key's mod revision, not its
// create revision, and a write returns the revision of its own transaction.
func TestResourceVersionIsModRevisionNotCreateRevision(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, 30*time.Second)
	cms := s.Clientset.CoreV1().ConfigMaps("default")

	created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"k": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	created.Data["k"] = "2"
	updated, err := cms.Update(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}

	resp, err := s.Etcd.Get(ctx, "/registry/configmaps/default/cfg")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("etcd get: %v", err)
	}
	kv := resp.Kvs[0]
	if got := revision(t, created.ResourceVersion); got != kv.CreateRevision {
		t.Errorf("create returned resourceVersion %d, want the creating transaction's revision %d", got, kv.CreateRevision)
	}
	if got := revision(t, updated.ResourceVersion); got != kv.ModRevision {
		t.Errorf("update returned resourceVersion %d, want mod revision %d", got, kv.ModRevision)
	}
	if kv.ModRevision == kv.CreateRevision {
		t.Fatalf("mod revision %d equals create revision after an update; the test proves nothing", kv.ModRevision)
	}
	got, err := cms.Get(ctx, "cfg", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if revision(t, got.ResourceVersion) != kv.ModRevision {
		t.Errorf("GET resourceVersion = %s, want mod revision %d (not create revision %d)", got.ResourceVersion, kv.ModRevision, kv.CreateRevision)
	}
}

// M4: an update carrying an old resourceVersion is a failed
// compare-and-swap: 409 Conflict, and etcd keeps the newer value.
func TestStaleUpdateIsRejectedWithConflictAndLeavesEtcdUnchanged(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, 30*time.Second)
	cms := s.Clientset.CoreV1().ConfigMaps("default")

	v1, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"k": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	v2 := v1.DeepCopy()
	v2.Data["k"] = "2"
	if _, err := cms.Update(ctx, v2, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("first update: %v", err)
	}
	before, _ := s.Etcd.Get(ctx, "/registry/configmaps/default/cfg")

	stale := v1.DeepCopy()
	stale.Data["k"] = "stale"
	_, err = cms.Update(ctx, stale, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("stale update: got %v, want 409 Conflict", err)
	}
	want := `Operation cannot be fulfilled on configmaps "cfg": the object has been modified; please apply your changes to the latest version and try again`
	if err.Error() != want {
		t.Errorf("conflict message = %q, want %q", err.Error(), want)
	}
	after, _ := s.Etcd.Get(ctx, "/registry/configmaps/default/cfg")
	if after.Kvs[0].ModRevision != before.Kvs[0].ModRevision || after.Header.Revision != before.Header.Revision {
		t.Errorf("etcd changed by a rejected update: mod revision %d -> %d, store revision %d -> %d",
			before.Kvs[0].ModRevision, after.Kvs[0].ModRevision, before.Header.Revision, after.Header.Revision)
	}
}

func TestSecondCreateOfSameNameIsAlreadyExists(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, 30*time.Second)
	pods := s.Clientset.CoreV1().Pods("default")
	if _, err := pods.Create(ctx, nginxPod("nginx"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("first create: %v", err)
	}
	_, err := pods.Create(ctx, nginxPod("nginx"), metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: got %v, want 409 AlreadyExists", err)
	}
	if want := `pods "nginx" already exists`; err.Error() != want {
		t.Errorf("message = %q, want %q", err.Error(), want)
	}
}

// M7: revisions are global, so one object's
// resourceVersion moves when other objects are written; comparing the
// resourceVersions of two objects says nothing about either.
func TestResourceVersionsOfDifferentObjectsShareOneGlobalCounter(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, 30*time.Second)
	cms := s.Clientset.CoreV1().ConfigMaps("default")
	a, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create a: %v", err)
	}
	if _, err := s.Clientset.CoreV1().Pods("default").Create(ctx, nginxPod("unrelated"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	b, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create b: %v", err)
	}
	if gap := revision(t, b.ResourceVersion) - revision(t, a.ResourceVersion); gap != 2 {
		t.Errorf("configmaps a and b are %d revisions apart, want 2: the pod write in between took a revision too", gap)
	}
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if revision(t, list.ResourceVersion) < revision(t, b.ResourceVersion) {
		t.Errorf("list resourceVersion %s is older than its newest item %s", list.ResourceVersion, b.ResourceVersion)
	}
}
