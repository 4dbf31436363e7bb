package e2e

import (
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
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
	// The only writes of a restart: the kubernetes Service and its
	// endpoints follow the apiserver to its new port (the tests' port 0).
	resp, err := second.Etcd.Get(ctx, "/", clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithMinModRev(revBefore+1))
	if err != nil {
		t.Fatal(err)
	}
	moved := map[string]bool{"/registry/services/specs/default/kubernetes": true,
		"/registry/services/endpoints/default/kubernetes": true, "/registry/endpointslices/default/kubernetes": true}
	for _, kv := range resp.Kvs {
		if !moved[string(kv.Key)] {
			t.Errorf("restart wrote %s (restart must neither lose nor add writes but the apiserver's endpoints)", kv.Key)
		}
	}
	if revAfter := currentRevision(t, second); revAfter < revBefore || revAfter > revBefore+int64(len(moved)) {
		t.Errorf("etcd revision after restart = %d, want %d plus at most the %d endpoint writes", revAfter, revBefore, len(moved))
	}
	namespaces, err := second.Clientset.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list namespaces: %v", err)
	}
	if len(namespaces.Items) != 4 {
		t.Errorf("got %d namespaces after restart, want the 4 default ones", len(namespaces.Items))
	}
}
