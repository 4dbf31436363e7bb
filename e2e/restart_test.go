package e2e

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/e2e/framework"
)

// Stopping minicp and starting it again on the same data directory keeps
// every object and every revision: etcd's WAL and snapshot are the truth.
func TestRestartOnSameDataDirKeepsObjectsAndRevisions(t *testing.T) {
	dir := t.TempDir()
	first := framework.Start(t, framework.Options{DataDir: dir})
	ctx := framework.Context(t, 60*time.Second)
	created, err := first.Clientset.CoreV1().ConfigMaps("default").Create(ctx,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "survivor"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	revBefore := currentRevision(t, first)
	first.Stop(t)

	second := framework.Start(t, framework.Options{DataDir: dir})
	got, err := second.Clientset.CoreV1().ConfigMaps("default").Get(ctx, "survivor", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get after restart: %v", err)
	}
	if got.ResourceVersion != created.ResourceVersion || got.UID != created.UID || got.Data["k"] != "v" {
		t.Errorf("after restart got rv=%s uid=%s data=%v, want rv=%s uid=%s data=map[k:v]",
			got.ResourceVersion, got.UID, got.Data, created.ResourceVersion, created.UID)
	}
	if revAfter := currentRevision(t, second); revAfter != revBefore {
		t.Errorf("etcd revision after restart = %d, want %d (restart must neither lose nor add writes)", revAfter, revBefore)
	}
	namespaces, err := second.Clientset.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list namespaces: %v", err)
	}
	if len(namespaces.Items) != 4 {
		t.Errorf("got %d namespaces after restart, want the 4 default ones", len(namespaces.Items))
	}
}
