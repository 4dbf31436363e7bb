package apiserver

import (
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Every kind's printer fills every column of its table, even for an
// object with nothing but a name.
func TestEveryKindPrintsACellPerColumn(t *testing.T) {
	for _, res := range testResources.All() {
		obj := res.New()
		m, _ := meta.Accessor(obj)
		m.SetName("x")
		m.SetCreationTimestamp(ago(time.Hour))
		if cells := rowCells(t, obj, res); cells[0] == nil {
			t.Errorf("%s: empty first cell", res.Name)
		}
	}
}

func TestWorkloadAndServiceRowsMatchUpstream(t *testing.T) {
	three := int32(3)
	deployment := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", CreationTimestamp: ago(2 * time.Minute)},
		Spec: appsv1.DeploymentSpec{Replicas: &three, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}}}},
		Status: appsv1.DeploymentStatus{ReadyReplicas: 1, UpdatedReplicas: 2, AvailableReplicas: 1},
	}
	service := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", CreationTimestamp: ago(time.Hour)},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIP: "10.0.0.7", Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}, {Port: 53, Protocol: corev1.ProtocolUDP}}},
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", CreationTimestamp: ago(time.Minute)},
		Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"a": nil, "b": nil}}
	one := int32(1)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "pi", CreationTimestamp: ago(time.Minute)},
		Spec: batchv1.JobSpec{Completions: &one, Parallelism: &one}}
	for _, tc := range []struct {
		group, resource string
		obj             runtime.Object
		want            []any
	}{
		{"apps", "deployments", deployment, []any{"web", "1/3", int64(2), int64(1), "2m", "nginx", "nginx:1.27", "app=web"}},
		{"", "services", service, []any{"web", "NodePort", "10.0.0.7", "<none>", "80:30080/TCP,53/UDP", "60m", "app=web"}},
		{"", "secrets", secret, []any{"s", "Opaque", int64(2), "60s"}},
		{"batch", "jobs", job, []any{"pi", "Running", "0/1", "", "60s", "", "", ""}},
	} {
		gvr := schema.GroupVersionResource{Group: tc.group, Version: "v1", Resource: tc.resource}
		res, ok := testResources.Lookup(gvr)
		if !ok {
			t.Fatalf("no resource %v", gvr)
		}
		if got := rowCells(t, tc.obj, res); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %#v, want %#v", tc.resource, got, tc.want)
		}
	}
}
