package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/controlplane"
	"minicp/e2e/framework"
)

// With --etcd-servers minicp starts no etcd of its own: it stores into the
// cluster it is given, where any other apiserver on the same etcd sees the
// same objects and revisions.
func TestEtcdServersUsesAnExistingClusterWithoutEmbeddedMember(t *testing.T) {
	owner := framework.Start(t, framework.Options{})
	guest := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.EtcdServers = owner.ControlPlane.EtcdEndpoints()
	}})
	if guest.ControlPlane.EtcdCluster() != nil {
		t.Fatal("minicp started an embedded etcd although --etcd-servers was given")
	}
	if _, err := os.Stat(filepath.Join(guest.DataDir, "etcd")); !os.IsNotExist(err) {
		t.Errorf("minicp with --etcd-servers created an etcd data directory (stat: %v)", err)
	}

	ctx := framework.Context(t, 30*time.Second)
	created, err := guest.Clientset.CoreV1().ConfigMaps("default").Create(ctx,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "shared"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create through the second apiserver: %v", err)
	}
	got, err := owner.Clientset.CoreV1().ConfigMaps("default").Get(ctx, "shared", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get through the first apiserver: %v", err)
	}
	if got.ResourceVersion != created.ResourceVersion || got.UID != created.UID {
		t.Errorf("first apiserver sees rv=%s uid=%s, want rv=%s uid=%s (one etcd, one truth)", got.ResourceVersion, got.UID, created.ResourceVersion, created.UID)
	}

	// Stopping the guest must leave the owner's etcd running.
	guest.Stop(t)
	if _, err := owner.Clientset.CoreV1().ConfigMaps("default").Get(ctx, "shared", metav1.GetOptions{}); err != nil {
		t.Fatalf("owner's etcd stopped with the guest apiserver: %v", err)
	}
}
