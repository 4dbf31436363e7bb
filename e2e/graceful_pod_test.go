package e2e

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"minicp/controlplane"
	"minicp/e2e/framework"
)

func hasKubectl() bool {
	_, err := exec.LookPath("kubectl")
	return err == nil
}

func podOn(name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
	}
}

// A pod bound to a node whose simulated kubelet runs is marked Terminating
// by DELETE and then deleted by the kubelet with grace 0: MODIFIED with the
// deletionTimestamp, then DELETED.
func TestTheKubeletFinishesAGracefulPodDeletion(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(cfg *controlplane.Config) { cfg.Nodes.Simulated = 1 }})
	ctx := framework.Context(t, time.Minute)
	pods := s.Clientset.CoreV1().Pods("default")
	created, err := pods.Create(ctx, podOn("web", "node-0"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: created.ResourceVersion, FieldSelector: "metadata.name=web"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := pods.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []watch.EventType{watch.Modified, watch.Deleted} {
		select {
		case ev := <-w.ResultChan():
			pod, _ := ev.Object.(*corev1.Pod)
			if ev.Type != want || pod == nil || pod.DeletionTimestamp == nil || pod.DeletionGracePeriodSeconds == nil || *pod.DeletionGracePeriodSeconds != 30 {
				t.Fatalf("got %s %+v, want %s of the pod marked with a 30 s grace period", ev.Type, ev.Object, want)
			}
		case <-ctx.Done():
			t.Fatalf("no %s event: the kubelet did not finish the deletion", want)
		}
	}
}

// Without a kubelet, a bound pod stays Terminating (the request's
// gracePeriodSeconds, else the pod's terminationGracePeriodSeconds); only
// a DELETE with grace 0 removes it. An unbound pod goes at once.
func TestAPodOnASilentNodeStaysTerminating(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, time.Minute)
	pods := s.Clientset.CoreV1().Pods("default")
	if _, err := pods.Create(ctx, podOn("stuck", "silent-node"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	grace := int64(45)
	before := time.Now().Add(-time.Second)
	if err := pods.Delete(ctx, "stuck", metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
	pod, err := pods.Get(ctx, "stuck", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("pod gone after a graceful DELETE with no kubelet: %v", err)
	}
	if pod.DeletionTimestamp == nil || *pod.DeletionGracePeriodSeconds != 45 || pod.DeletionTimestamp.Time.Before(before.Add(44*time.Second)) {
		t.Fatalf("deletionTimestamp %v grace %v, want about now+45s and 45", pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds)
	}
	if hasKubectl() {
		out := kubectl(t, s, "get", "pod", "stuck")
		if !strings.Contains(out, "Terminating") {
			t.Errorf("kubectl get pod: want Terminating in\n%s", out)
		}
	}
	zero := int64(0)
	if err := pods.Delete(ctx, "stuck", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx, "stuck", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after a DELETE with grace 0: got %v, want 404", err)
	}

	if _, err := pods.Create(ctx, podOn("pending", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "pending", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx, "pending", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("unbound pod after DELETE: got %v, want 404", err)
	}
}
