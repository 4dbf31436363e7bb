package kinds

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minicp/internal/testetcd"
	"minicp/registry"
)

// startEtcd runs a single-member etcd in the test's temporary directory,
// on free ports, and returns its client. Both stop when the test ends.
func startEtcd(t *testing.T) *clientv3.Client {
	t.Helper()
	return testetcd.Start(t).Client()
}

// testResources is the table the package's tests serve.
var testResources = NewTable()

// newTestStore starts etcd and returns a Store of the built-in kinds on it
// with the "default" namespace created.
func newTestStore(t *testing.T, opts registry.Options) (*registry.Store, *clientv3.Client) {
	t.Helper()
	client := startEtcd(t)
	s, err := registry.NewStore(client, testResources, opts)
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

func mustResource(t *testing.T, gv schema.GroupVersion, name string) *registry.Resource {
	t.Helper()
	res, ok := testResources.Lookup(gv.WithResource(name))
	if !ok {
		t.Fatalf("no resource %s in %s", name, gv)
	}
	return res
}

func podsResource(t *testing.T) *registry.Resource {
	return mustResource(t, corev1.SchemeGroupVersion, "pods")
}

func createNamespace(t *testing.T, s *registry.Store, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := s.Create(testContext(t), mustResource(t, corev1.SchemeGroupVersion, "namespaces"), "", ns, registry.WriteOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}

func newPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
	}
}

func createPod(t *testing.T, s *registry.Store, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	out, err := s.Create(testContext(t), podsResource(t), "default", pod, registry.WriteOptions{})
	if err != nil {
		t.Fatalf("creating pod %s: %v", pod.Name, err)
	}
	return out.(*corev1.Pod)
}

// rvOf returns an object's resourceVersion as a revision.
func rvOf(t *testing.T, obj interface{ GetResourceVersion() string }) int64 {
	t.Helper()
	rev, err := registry.ParseResourceVersion(obj.GetResourceVersion())
	if err != nil {
		t.Fatalf("bad resourceVersion %q: %v", obj.GetResourceVersion(), err)
	}
	return rev
}
