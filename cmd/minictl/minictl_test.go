package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/e2e/framework"
)

// M2: what minictl shows of a stored pod is the upstream
// layout — the key, its revisions, and the k8s\x00 protobuf envelope.
func TestEtcdGetShowsKeyRevisionsAndEnvelope(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
	}
	created, err := s.Clientset.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}

	var out bytes.Buffer
	endpoints := strings.Join(s.ControlPlane.EtcdEndpoints(), ",")
	if err := run(ctx, []string{"--etcd-endpoints", endpoints, "etcd", "get", "/registry/pods/default/nginx"}, &out); err != nil {
		t.Fatalf("minictl etcd get: %v", err)
	}
	for _, want := range []string{
		"key:             /registry/pods/default/nginx",
		fmt.Sprintf("mod_revision:    %s", created.ResourceVersion),
		`protobuf envelope "k8s\x00" + runtime.Unknown{typeMeta: {apiVersion: v1, kind: Pod}`,
		"first bytes:     6b 38 73 00",
		// The envelope field by field, read without a schema.
		"  field 1 typeMeta (message, ",
		`    field 2 kind (bytes, 3): "Pod"`,
		"  field 2 raw (message, ",
		`      field 1 (bytes, 5): "nginx"`,
		`"image": "nginx:1.27"`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output does not contain %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	// Without --etcd-endpoints, minictl finds etcd in minicp's data
	// directory; global flags may follow the command.
	if err := run(ctx, []string{"etcd", "status", "--data-dir", s.DataDir}, &out); err != nil {
		t.Fatalf("minictl etcd status: %v", err)
	}
	for _, want := range []string{"is leader: true", "revision:", "alarms:         none", "members:        minicp-etcd ("} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status output does not contain %q:\n%s", want, out.String())
		}
	}
}
