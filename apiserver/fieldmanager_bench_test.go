package apiserver

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minicp/kinds"
	"minicp/registry/typeconverter"
)

// BenchmarkRecordCreate is what managedFields add to a create inside the
// apiserver: finding the resource's field manager (fieldManagerFor, as a
// create does) and recording the creator's entry, for a ConfigMap and a
// Deployment as the e2e create benchmark writes them.
//
//	go test -run XXX -bench BenchmarkRecordCreate -benchmem ./apiserver/
func BenchmarkRecordCreate(b *testing.B) {
	table := kinds.NewTable()
	labels := map[string]string{"app": "web", "tier": "frontend"}
	replicas := int32(2)
	cases := []struct {
		gvr schema.GroupVersionResource
		obj runtime.Object
	}{
		{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: labels},
			Data:       map[string]string{"mode": "fast", "level": "3", "region": "eu-west"},
		}},
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "d", Labels: labels},
			Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: "nginx:1.27", Ports: []corev1.ContainerPort{{ContainerPort: 80}},
					Env: []corev1.EnvVar{{Name: "MODE", Value: "fast"}},
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}},
				}}}}},
		}},
	}
	for _, c := range cases {
		res, ok := table.Lookup(c.gvr)
		if !ok {
			b.Fatalf("no %v", c.gvr)
		}
		b.Run(res.Name, func(b *testing.B) {
			typeconverter.Builtin() // parsed once per process, not per create
			for b.Loop() {
				fm, err := fieldManagerFor(res, "")
				if err != nil {
					b.Fatal(err)
				}
				obj := fm.UpdateNoErrors(emptyObject(res), c.obj.DeepCopyObject(), "bench")
				if len(obj.(metav1.Object).GetManagedFields()) != 1 {
					b.Fatal("no managedFields entry")
				}
			}
		})
	}
}

// BenchmarkRecordLeaseRenewal is what managedFields add to a Node Lease
// renewal inside the apiserver, the write a cluster makes most (one per
// node every 10 s): finding the field manager of leases and recording the
// kubelet's update of spec.renewTime against the stored Lease, which
// already carries the kubelet's entry from its create. Each iteration
// copies the stored Lease and moves renewTime, as the kubelet sends it.
//
//	go test -run XXX -bench BenchmarkRecordLeaseRenewal -benchmem ./apiserver/
func BenchmarkRecordLeaseRenewal(b *testing.B) {
	res, ok := kinds.NewTable().Lookup(schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"})
	if !ok {
		b.Fatal("no leases")
	}
	holder, duration := "node-1", int32(40)
	renewed := metav1.NewMicroTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	created := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", Namespace: "kube-node-lease",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "node-1", UID: "3f0c"}}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &duration, RenewTime: &renewed},
	}
	typeconverter.Builtin() // parsed once per process, not per renewal
	fm, err := fieldManagerFor(res, "")
	if err != nil {
		b.Fatal(err)
	}
	stored := fm.UpdateNoErrors(emptyObject(res), created, "kubelet").(*coordinationv1.Lease)
	for b.Loop() {
		fm, err := fieldManagerFor(res, "")
		if err != nil {
			b.Fatal(err)
		}
		lease := stored.DeepCopy()
		next := metav1.NewMicroTime(lease.Spec.RenewTime.Add(10 * time.Second))
		lease.Spec.RenewTime = &next
		obj := fm.UpdateNoErrors(stored, lease, "kubelet")
		if entries := obj.(metav1.Object).GetManagedFields(); len(entries) != 1 || entries[0].Manager != "kubelet" {
			b.Fatalf("managedFields = %+v, want the kubelet's one entry", entries)
		}
	}
}
