package registry

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minicp/embedetcd"
	"minicp/internal/testetcd"
)

// startEtcd runs a single-member etcd (the same embedded member minicp
// runs) in the test's temporary directory, on free ports, and returns its
// client. Both stop when the test ends.
func startEtcd(t *testing.T, configure ...func(*embedetcd.Config)) *clientv3.Client {
	t.Helper()
	return testetcd.Start(t, configure...).Client()
}

// newTestStore starts etcd and returns a Store on it with the "default"
// namespace created.
func newTestStore(t *testing.T, opts Options, configure ...func(*embedetcd.Config)) (*Store, *clientv3.Client) {
	t.Helper()
	client := startEtcd(t, configure...)
	if opts.TooLargeResourceVersionWait == 0 {
		opts.TooLargeResourceVersionWait = 200 * time.Millisecond
	}
	s, err := NewStore(client, testResources, opts)
	if err != nil {
		t.Fatalf("NewStore: %v", err)
	}
	createNamespace(t, s, "default")
	return s, client
}

// testContext is a context that ends with the test, or after a minute.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func mustResource(t *testing.T, gv schema.GroupVersion, name string) *Resource {
	t.Helper()
	res, ok := testResources.Lookup(gv.WithResource(name))
	if !ok {
		t.Fatalf("no resource %s in %s", name, gv)
	}
	return res
}

func podsResource(t *testing.T) *Resource {
	return mustResource(t, corev1.SchemeGroupVersion, "pods")
}

func createNamespace(t *testing.T, s *Store, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := s.Create(testContext(t), mustResource(t, corev1.SchemeGroupVersion, "namespaces"), "", ns, WriteOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}

func newPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
	}
}

func createPod(t *testing.T, s *Store, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	out, err := s.Create(testContext(t), podsResource(t), "default", pod, WriteOptions{})
	if err != nil {
		t.Fatalf("creating pod %s: %v", pod.Name, err)
	}
	return out.(*corev1.Pod)
}

func newLease(name string) *coordinationv1.Lease {
	holder := name
	duration := int32(40)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &duration},
	}
}

// rvOf returns an object's resourceVersion as a revision.
func rvOf(t *testing.T, obj interface{ GetResourceVersion() string }) int64 {
	t.Helper()
	rev, err := resourceVersionToRevision(obj.GetResourceVersion())
	if err != nil {
		t.Fatalf("bad resourceVersion %q: %v", obj.GetResourceVersion(), err)
	}
	return rev
}
