package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/e2e/framework"
)

// Deleting a namespace works as on a real cluster: Terminating, emptied by
// the namespace controller, finalized, gone — with nothing left in etcd.
func TestDeletingANamespaceRemovesEverythingInItThenTheNamespace(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, time.Minute)
	cs := s.Clientset
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "lab"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}
		if _, err := cs.CoreV1().ConfigMaps("lab").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}
	if _, err := cs.CoreV1().Pods("lab").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "holder"}}
	if _, err := cs.CoordinationV1().Leases("lab").Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "web.1"}, InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web", Namespace: "lab"}}
	if _, err := cs.CoreV1().Events("lab").Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	if err := cs.CoreV1().Namespaces().Delete(ctx, "lab", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, framework.StateTimeout, "namespace lab to be gone", func() bool {
		_, err := cs.CoreV1().Namespaces().Get(ctx, "lab", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	t.Logf("namespace with 8 objects gone %v after DELETE", time.Since(start).Round(time.Millisecond))
	for _, prefix := range []string{"/registry/configmaps/lab/", "/registry/pods/lab/", "/registry/leases/lab/", "/registry/events/lab/", "/registry/namespaces/lab"} {
		resp, err := s.Etcd.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil || resp.Count != 0 {
			t.Errorf("etcd keys under %s after the deletion: %v %v, want none", prefix, resp.Count, err)
		}
	}
}

// kubectl delete namespace waits for the namespace to disappear; it must
// come back, as on a real cluster, instead of hanging on Terminating.
func TestKubectlDeleteNamespaceReturnsOnceItIsGone(t *testing.T) {
	requireKubectl(t)
	s := framework.Start(t, framework.Options{})
	kubectl(t, s, "create", "namespace", "lab")
	kubectl(t, s, "-n", "lab", "create", "configmap", "settings", "--from-literal=mode=one")
	start := time.Now()
	out := kubectl(t, s, "delete", "namespace", "lab", "--timeout=20s")
	assertContains(t, "delete namespace", out, `namespace "lab" deleted`)
	t.Logf("kubectl delete namespace took %v", time.Since(start).Round(time.Millisecond))
	if out, err := kubectlErr(t, s, "get", "namespace", "lab"); err == nil || !strings.Contains(out, "NotFound") {
		t.Errorf("namespace lab after kubectl delete: %v\n%s", err, out)
	}
	out, err := kubectlErr(t, s, "delete", "namespace", "default")
	if err == nil || !strings.Contains(out, "this namespace may not be deleted") {
		t.Errorf("kubectl delete namespace default: %v\n%s", err, out)
	}
}
