package storagetest

// Valid objects of the workload, Service, volume and autoscaler kinds,
// whose strategies require more than a name (a selector matching the pod
// template, a schedule, a port, access modes and a size, a target).

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func init() {
	for gr, f := range workloadSamples {
		samples[gr] = f
	}
}

// sampleTemplate is a pod template every workload accepts.
func sampleTemplate(restart corev1.RestartPolicy) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "sample"}},
		Spec:       corev1.PodSpec{RestartPolicy: restart, Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
	}
}

func sampleSelector() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": "sample"}}
}

func named(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

var workloadSamples = map[schema.GroupResource]func(name string) runtime.Object{
	{Resource: "podtemplates"}: func(name string) runtime.Object {
		return &corev1.PodTemplate{ObjectMeta: named(name), Template: sampleTemplate(corev1.RestartPolicyAlways)}
	},
	{Resource: "replicationcontrollers"}: func(name string) runtime.Object {
		t := sampleTemplate(corev1.RestartPolicyAlways)
		return &corev1.ReplicationController{ObjectMeta: named(name), Spec: corev1.ReplicationControllerSpec{Template: &t}}
	},
	{Resource: "services"}: func(name string) runtime.Object {
		return &corev1.Service{ObjectMeta: named(name), Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	},
	{Group: "events.k8s.io", Resource: "events"}: func(name string) runtime.Object {
		return &eventsv1.Event{ObjectMeta: named(name), Regarding: corev1.ObjectReference{Kind: "Pod", Name: "web", Namespace: ns}}
	},
	{Group: "apps", Resource: "deployments"}: func(name string) runtime.Object {
		return &appsv1.Deployment{ObjectMeta: named(name), Spec: appsv1.DeploymentSpec{Selector: sampleSelector(), Template: sampleTemplate("")}}
	},
	{Group: "apps", Resource: "replicasets"}: func(name string) runtime.Object {
		return &appsv1.ReplicaSet{ObjectMeta: named(name), Spec: appsv1.ReplicaSetSpec{Selector: sampleSelector(), Template: sampleTemplate("")}}
	},
	{Group: "apps", Resource: "statefulsets"}: func(name string) runtime.Object {
		return &appsv1.StatefulSet{ObjectMeta: named(name), Spec: appsv1.StatefulSetSpec{Selector: sampleSelector(), Template: sampleTemplate("")}}
	},
	{Group: "apps", Resource: "daemonsets"}: func(name string) runtime.Object {
		return &appsv1.DaemonSet{ObjectMeta: named(name), Spec: appsv1.DaemonSetSpec{Selector: sampleSelector(), Template: sampleTemplate("")}}
	},
	{Group: "batch", Resource: "jobs"}: func(name string) runtime.Object {
		return &batchv1.Job{ObjectMeta: named(name), Spec: batchv1.JobSpec{Template: sampleTemplate(corev1.RestartPolicyNever)}}
	},
	{Group: "batch", Resource: "cronjobs"}: func(name string) runtime.Object {
		return &batchv1.CronJob{ObjectMeta: named(name), Spec: batchv1.CronJobSpec{Schedule: "@hourly",
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: sampleTemplate(corev1.RestartPolicyOnFailure)}}}}
	},
	{Resource: "persistentvolumeclaims"}: func(name string) runtime.Object {
		return &corev1.PersistentVolumeClaim{ObjectMeta: named(name), Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	},
	{Resource: "persistentvolumes"}: func(name string) runtime.Object {
		return &corev1.PersistentVolume{ObjectMeta: named(name), Spec: corev1.PersistentVolumeSpec{
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + name}}}}
	},
	{Group: "autoscaling", Resource: "horizontalpodautoscalers"}: func(name string) runtime.Object {
		return &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: named(name), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			MaxReplicas: 3, ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "sample"}}}
	},
}
