package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/e2e/framework"
)

// BenchmarkCreateOverHTTP times creates one after another through
// client-go (JSON), as a controller creates objects, and reports what an
// object costs in etcd: ns/op is the latency of one create, creates/s its
// inverse, stored-bytes/object the mean size of the values under the
// kind's prefix after the run (protobuf, managedFields included).
//
//	go test -run XXX -bench BenchmarkCreateOverHTTP -count 5 ./e2e/
func BenchmarkCreateOverHTTP(b *testing.B) {
	labels := map[string]string{"app": "web", "tier": "frontend"}
	kinds := []struct {
		name, prefix string
		create       func(ctx context.Context, s *framework.Stack, name string) error
	}{
		{"configmap", "/registry/configmaps/default/", func(ctx context.Context, s *framework.Stack, name string) error {
			_, err := s.Clientset.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
				Data:       map[string]string{"mode": "fast", "level": "3", "region": "eu-west"},
			}, metav1.CreateOptions{FieldManager: "bench"})
			return err
		}},
		{"deployment", "/registry/deployments/default/", func(ctx context.Context, s *framework.Stack, name string) error {
			_, err := s.Clientset.AppsV1().Deployments("default").Create(ctx, benchDeployment(name, labels), metav1.CreateOptions{FieldManager: "bench"})
			return err
		}},
	}
	for _, k := range kinds {
		b.Run(k.name, func(b *testing.B) {
			s := framework.Start(b, framework.Options{})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			i := 0
			for b.Loop() {
				if err := k.create(ctx, s, fmt.Sprintf("obj-%d", i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "creates/s")
			resp, err := s.Etcd.Get(ctx, k.prefix, clientv3.WithPrefix())
			if err != nil || len(resp.Kvs) == 0 {
				b.Fatalf("reading %s back: %v, %d keys", k.prefix, err, len(resp.Kvs))
			}
			total := 0
			for _, kv := range resp.Kvs {
				total += len(kv.Value)
			}
			b.ReportMetric(float64(total)/float64(len(resp.Kvs)), "stored-bytes/object")
		})
	}
}

// benchDeployment is a Deployment as a user writes it: one container with
// a port, resources and an environment variable.
func benchDeployment(name string, labels map[string]string) *appsv1.Deployment {
	replicas := int32(2)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: "nginx:1.27",
					Ports: []corev1.ContainerPort{{ContainerPort: 80}},
					Env:   []corev1.EnvVar{{Name: "MODE", Value: "fast"}},
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi"),
					}},
				}}},
			},
		},
	}
}
