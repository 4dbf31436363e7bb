package registry

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resource describes one REST resource: its names as discovery shows them,
// where its objects live in etcd, and how to make empty objects of it.
type Resource struct {
	GroupVersion schema.GroupVersion
	Name         string // plural, as in the URL: "pods"
	SingularName string
	Kind         string
	ListKind     string
	ShortNames   []string
	Namespaced   bool
	// Prefix is the etcd key prefix without the trailing slash, exactly as
	// upstream: "/registry/pods". Keys are Prefix/<namespace>/<name> for
	// namespaced resources and Prefix/<name> otherwise.
	Prefix string
	// Subresources the apiserver routes ("status"; "finalize" for namespaces).
	Subresources []string
	// AllowCreateOnUpdate lets PUT create a missing object, as upstream does
	// for leases, events and nodes.
	AllowCreateOnUpdate bool

	New     func() runtime.Object
	NewList func() runtime.Object
}

// GroupVersionResource returns the resource's identity for routing.
func (r *Resource) GroupVersionResource() schema.GroupVersionResource {
	return r.GroupVersion.WithResource(r.Name)
}

// GroupVersionKind returns the kind of the resource's objects.
func (r *Resource) GroupVersionKind() schema.GroupVersionKind {
	return r.GroupVersion.WithKind(r.Kind)
}

var (
	coreV1         = corev1.SchemeGroupVersion
	coordinationV1 = coordinationv1.SchemeGroupVersion
)

// Resources is the table of every resource minicp serves, in discovery order.
var Resources = []*Resource{
	{
		GroupVersion: coreV1, Name: "namespaces", SingularName: "namespace", Kind: "Namespace", ListKind: "NamespaceList",
		ShortNames: []string{"ns"}, Prefix: "/registry/namespaces", Subresources: []string{"status", "finalize"},
		New: func() runtime.Object { return &corev1.Namespace{} }, NewList: func() runtime.Object { return &corev1.NamespaceList{} },
	},
	{
		GroupVersion: coreV1, Name: "nodes", SingularName: "node", Kind: "Node", ListKind: "NodeList",
		ShortNames: []string{"no"}, Prefix: "/registry/minions", Subresources: []string{"status"}, AllowCreateOnUpdate: false,
		New: func() runtime.Object { return &corev1.Node{} }, NewList: func() runtime.Object { return &corev1.NodeList{} },
	},
	{
		GroupVersion: coreV1, Name: "pods", SingularName: "pod", Kind: "Pod", ListKind: "PodList",
		ShortNames: []string{"po"}, Namespaced: true, Prefix: "/registry/pods", Subresources: []string{"status"},
		New: func() runtime.Object { return &corev1.Pod{} }, NewList: func() runtime.Object { return &corev1.PodList{} },
	},
	{
		GroupVersion: coreV1, Name: "configmaps", SingularName: "configmap", Kind: "ConfigMap", ListKind: "ConfigMapList",
		ShortNames: []string{"cm"}, Namespaced: true, Prefix: "/registry/configmaps",
		New: func() runtime.Object { return &corev1.ConfigMap{} }, NewList: func() runtime.Object { return &corev1.ConfigMapList{} },
	},
	{
		GroupVersion: coreV1, Name: "events", SingularName: "event", Kind: "Event", ListKind: "EventList",
		ShortNames: []string{"ev"}, Namespaced: true, Prefix: "/registry/events", AllowCreateOnUpdate: true,
		New: func() runtime.Object { return &corev1.Event{} }, NewList: func() runtime.Object { return &corev1.EventList{} },
	},
	{
		GroupVersion: coordinationV1, Name: "leases", SingularName: "lease", Kind: "Lease", ListKind: "LeaseList",
		Namespaced: true, Prefix: "/registry/leases", AllowCreateOnUpdate: true,
		New: func() runtime.Object { return &coordinationv1.Lease{} }, NewList: func() runtime.Object { return &coordinationv1.LeaseList{} },
	},
}

// Lookup finds a resource by group, version and plural name.
func Lookup(gvr schema.GroupVersionResource) (*Resource, bool) {
	for _, r := range Resources {
		if r.GroupVersionResource() == gvr {
			return r, true
		}
	}
	return nil, false
}
