package registry

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"minicp/registry/rest"
)

// The package's tests serve a few kinds described here with nothing but
// what the mechanism needs: keys, scope, selectable fields, leases. The
// built-in kinds' own rules (defaulting, validation, graceful deletion,
// Service allocation) are package kinds', and so are their tests; package
// kinds imports this one, so these tests cannot use it.

var coordinationV1 = coordinationv1.SchemeGroupVersion

// testResources is the table the package's tests serve.
var testResources = newTestTable()

func newTestTable() *Table {
	table, err := NewTable(
		&Resource{
			GroupVersion: corev1.SchemeGroupVersion, Name: "namespaces", SingularName: "namespace", Kind: "Namespace", ListKind: "NamespaceList",
			Prefix: "/registry/namespaces",
			New:    func() runtime.Object { return &corev1.Namespace{} }, NewList: func() runtime.Object { return &corev1.NamespaceList{} },
		},
		&Resource{
			GroupVersion: corev1.SchemeGroupVersion, Name: "nodes", SingularName: "node", Kind: "Node", ListKind: "NodeList",
			Prefix: "/registry/minions", DeleteCollection: true,
			New: func() runtime.Object { return &corev1.Node{} }, NewList: func() runtime.Object { return &corev1.NodeList{} },
		},
		&Resource{
			GroupVersion: corev1.SchemeGroupVersion, Name: "pods", SingularName: "pod", Kind: "Pod", ListKind: "PodList",
			Namespaced: true, Prefix: "/registry/pods", DeleteCollection: true,
			// New pods are Pending, so that a selector on status.phase
			// has something to match.
			Strategy: &rest.Strategy{PrepareForCreate: func(obj runtime.Object) {
				obj.(*corev1.Pod).Status = corev1.PodStatus{Phase: corev1.PodPending}
			}},
			SelectableFields: func(obj runtime.Object) fields.Set {
				pod := obj.(*corev1.Pod)
				return fields.Set{"spec.nodeName": pod.Spec.NodeName, "status.phase": string(pod.Status.Phase)}
			},
			New: func() runtime.Object { return &corev1.Pod{} }, NewList: func() runtime.Object { return &corev1.PodList{} },
		},
		&Resource{
			GroupVersion: corev1.SchemeGroupVersion, Name: "configmaps", SingularName: "configmap", Kind: "ConfigMap", ListKind: "ConfigMapList",
			Namespaced: true, Prefix: "/registry/configmaps", DeleteCollection: true,
			New: func() runtime.Object { return &corev1.ConfigMap{} }, NewList: func() runtime.Object { return &corev1.ConfigMapList{} },
		},
		&Resource{
			GroupVersion: corev1.SchemeGroupVersion, Name: "events", SingularName: "event", Kind: "Event", ListKind: "EventList",
			Namespaced: true, Prefix: "/registry/events", TTL: TTLEvent, AllowCreateOnUpdate: true, DeleteCollection: true,
			New: func() runtime.Object { return &corev1.Event{} }, NewList: func() runtime.Object { return &corev1.EventList{} },
		},
		&Resource{
			GroupVersion: coordinationV1, Name: "leases", SingularName: "lease", Kind: "Lease", ListKind: "LeaseList",
			Namespaced: true, Prefix: "/registry/leases", AllowCreateOnUpdate: true, DeleteCollection: true,
			New: func() runtime.Object { return &coordinationv1.Lease{} }, NewList: func() runtime.Object { return &coordinationv1.LeaseList{} },
		},
	)
	if err != nil {
		panic(err)
	}
	return table
}
