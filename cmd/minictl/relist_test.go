package main

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/controlplane"
	"minicp/e2e/framework"
	"minicp/internal/testsupport"
)

// M6: with the watch cache off, compacting etcd while the
// informers are away makes every one of them relist.
func TestRelistWithCompactionAndNoCacheRelistsEveryInformer(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) { c.WatchCache.Enabled = false }})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := runOK(t, ctx, "--endpoints="+strings.Join(s.ControlPlane.EtcdEndpoints(), ","), "relist",
		"--kubeconfig", s.Kubeconfig, "--informers", "2", "--existing", "10", "--objects", "5", "--disconnect", "100ms", "--compact")
	wantLines(t, out, "compacted etcd to revision", "410 Gone x1, relisted with 1 watch-list", "2 of 2 informers relisted", "2 watch-list")
}

func TestInformerPrintsRequestsChangesAndItsStore(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out testsupport.SyncBuffer
	done := make(chan error, 1) // written once by the informer goroutine
	go func() { done <- run(ctx, []string{"informer", "--kubeconfig", s.Kubeconfig}, &out) }()
	framework.Eventually(t, 10*time.Second, "the informer to sync", func() bool { return strings.Contains(out.String(), "synced: ") })
	cm, err := s.Clientset.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "store: a@" + cm.ResourceVersion + " (last synced resourceVersion "
	framework.Eventually(t, 10*time.Second, "the informer to print its new store", func() bool { return strings.Contains(out.String(), want) })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("informer: %v", err)
	}
	wantLines(t, out.String(), `WATCH-LIST from resourceVersion ""`, "ADDED    a rv="+cm.ResourceVersion)
}
