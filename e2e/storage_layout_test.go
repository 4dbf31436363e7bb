package e2e

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"minicp/controlplane"
	"minicp/e2e/framework"
)

func nginxPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "nginx"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
	}
}

// M2: the apiserver stores protobuf-encoded opaque bytes
// under /registry/pods/<namespace>/<name>.
func TestPodIsStoredUnderRegistryKeyAsProtobufEnvelope(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, 30*time.Second)
	if _, err := s.Clientset.CoreV1().Pods("default").Create(ctx, nginxPod("nginx"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}

	resp, err := s.Etcd.Get(ctx, "/registry/pods/default/nginx")
	if err != nil {
		t.Fatalf("etcd get: %v", err)
	}
	if len(resp.Kvs) != 1 {
		t.Fatalf("got %d keys at /registry/pods/default/nginx, want 1", len(resp.Kvs))
	}
	value := resp.Kvs[0].Value
	if !bytes.HasPrefix(value, []byte("k8s\x00")) {
		t.Fatalf("stored value starts with %q, want the protobuf envelope prefix %q", value[:min(8, len(value))], "k8s\x00")
	}
	var unknown runtime.Unknown
	if err := unknown.Unmarshal(value[4:]); err != nil {
		t.Fatalf("decoding runtime.Unknown envelope: %v", err)
	}
	if unknown.APIVersion != "v1" || unknown.Kind != "Pod" {
		t.Errorf("envelope type = %s/%s, want v1/Pod", unknown.APIVersion, unknown.Kind)
	}
	var pod corev1.Pod
	if err := pod.Unmarshal(unknown.Raw); err != nil {
		t.Fatalf("decoding pod from envelope: %v", err)
	}
	if pod.Name != "nginx" || pod.Spec.Containers[0].Image != "nginx:1.27" {
		t.Errorf("decoded pod = %s with image %s, want nginx with nginx:1.27", pod.Name, pod.Spec.Containers[0].Image)
	}
	if pod.ResourceVersion != "" {
		t.Errorf("stored pod carries resourceVersion %q; upstream never stores it (it is the key's mod revision)", pod.ResourceVersion)
	}
}

func TestEveryResourceUsesUpstreamKeyLayout(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, 30*time.Second)
	cs := s.Clientset
	mustNoErr := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	_, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}}, metav1.CreateOptions{})
	mustNoErr("create configmap", err)
	_, err = cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}, metav1.CreateOptions{})
	mustNoErr("create node", err)
	_, err = cs.CoordinationV1().Leases("kube-node-lease").Create(ctx, nodeLease("node-a"), metav1.CreateOptions{})
	mustNoErr("create lease", err)

	for _, key := range []string{
		"/registry/namespaces/default",
		"/registry/namespaces/kube-node-lease",
		"/registry/configmaps/default/cfg",
		"/registry/minions/node-a",
		"/registry/leases/kube-node-lease/node-a",
	} {
		resp, err := s.Etcd.Get(ctx, key)
		mustNoErr("etcd get "+key, err)
		if len(resp.Kvs) != 1 {
			t.Errorf("key %s: got %d keys, want 1", key, len(resp.Kvs))
		}
	}
}

func TestJSONStorageMediaTypeStoresReadableJSON(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.StorageMediaType = controlplane.MediaTypeJSON
	}})
	ctx := framework.Context(t, 30*time.Second)
	if _, err := s.Clientset.CoreV1().Pods("default").Create(ctx, nginxPod("nginx"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	resp, err := s.Etcd.Get(ctx, "/registry/pods/default/nginx")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("etcd get: %v (%d keys)", err, len(resp.Kvs))
	}
	var stored map[string]any
	if err := json.Unmarshal(resp.Kvs[0].Value, &stored); err != nil {
		t.Fatalf("stored value is not JSON: %v: %q", err, resp.Kvs[0].Value)
	}
	if stored["kind"] != "Pod" || stored["apiVersion"] != "v1" {
		t.Errorf("stored JSON kind/apiVersion = %v/%v, want Pod/v1", stored["kind"], stored["apiVersion"])
	}
}
