package kinds

// The scale subresource: deployments, replicasets, statefulsets and
// replicationcontrollers are read and resized through an autoscaling/v1
// Scale, as `kubectl scale` and the HorizontalPodAutoscaler do. A Scale is
// a view of its object: its metadata is the object's (the same
// resourceVersion, so a Scale write is guarded like a write of the object),
// spec.replicas is the object's, status the observed count and the
// selector as a string.

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// scaleView is what a Scale shows of an object.
type scaleView struct {
	meta     *metav1.ObjectMeta
	replicas **int32
	status   int32
	selector string
}

// viewForScale returns the scale view of obj, or an error for a kind
// without a scale subresource.
func viewForScale(obj runtime.Object) (scaleView, error) {
	selectorString := func(s *metav1.LabelSelector) string {
		sel, err := metav1.LabelSelectorAsSelector(s)
		if err != nil {
			return ""
		}
		return sel.String()
	}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return scaleView{&o.ObjectMeta, &o.Spec.Replicas, o.Status.Replicas, selectorString(o.Spec.Selector)}, nil
	case *appsv1.ReplicaSet:
		return scaleView{&o.ObjectMeta, &o.Spec.Replicas, o.Status.Replicas, selectorString(o.Spec.Selector)}, nil
	case *appsv1.StatefulSet:
		return scaleView{&o.ObjectMeta, &o.Spec.Replicas, o.Status.Replicas, selectorString(o.Spec.Selector)}, nil
	case *corev1.ReplicationController:
		return scaleView{&o.ObjectMeta, &o.Spec.Replicas, o.Status.Replicas, labels.SelectorFromSet(o.Spec.Selector).String()}, nil
	}
	return scaleView{}, fmt.Errorf("%T has no scale subresource", obj)
}

// ScaleOf returns obj's Scale.
func ScaleOf(obj runtime.Object) (*autoscalingv1.Scale, error) {
	v, err := viewForScale(obj)
	if err != nil {
		return nil, err
	}
	var replicas int32
	if *v.replicas != nil {
		replicas = **v.replicas
	}
	return &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{
			Name: v.meta.Name, Namespace: v.meta.Namespace, UID: v.meta.UID,
			ResourceVersion: v.meta.ResourceVersion, CreationTimestamp: v.meta.CreationTimestamp,
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: replicas},
		Status: autoscalingv1.ScaleStatus{Replicas: v.status, Selector: v.selector},
	}, nil
}

// ApplyScale sets obj's replicas to the Scale's. The caller writes obj as
// an update of the object itself, so its generation grows as for any
// spec change.
func ApplyScale(obj runtime.Object, scale *autoscalingv1.Scale) error {
	v, err := viewForScale(obj)
	if err != nil {
		return err
	}
	replicas := scale.Spec.Replicas
	*v.replicas = &replicas
	return nil
}
