package kinds

import (
	"strconv"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"minicp/registry"
)

// The built-in kinds: one entry each. Builtin returns fresh descriptors on
// every call, so that no two tables share a mutable value; the strategies
// and printers they point to are immutable.

var (
	coreV1         = corev1.SchemeGroupVersion
	coordinationV1 = coordinationv1.SchemeGroupVersion
)

// Builtin returns every built-in resource minicp serves, in discovery
// order, with the default Service ranges (NewConfig).
func Builtin() []*registry.Resource {
	resources, err := NewConfig().Builtin()
	if err != nil {
		panic(err) // the defaults parse: a bug this package's tests catch
	}
	return resources
}

// Builtin returns every built-in resource minicp serves, in discovery
// order, whose Services take their addresses from c's ranges.
func (c Config) Builtin() ([]*registry.Resource, error) {
	services, err := parseServiceRanges(c)
	if err != nil {
		return nil, err
	}
	resources := []*registry.Resource{
		{
			GroupVersion: coreV1, Name: "namespaces", SingularName: "namespace", Kind: "Namespace", ListKind: "NamespaceList",
			ShortNames: []string{"ns"}, Prefix: "/registry/namespaces",
			Strategy: namespaceStrategy, Subresources: []string{"status", "finalize"},
			SelectableFields: func(obj runtime.Object) fields.Set {
				return fields.Set{"status.phase": string(obj.(*corev1.Namespace).Status.Phase)}
			},
			Printer: namespacePrinter,
			New:     func() runtime.Object { return &corev1.Namespace{} }, NewList: func() runtime.Object { return &corev1.NamespaceList{} },
		},
		{
			GroupVersion: coreV1, Name: "nodes", SingularName: "node", Kind: "Node", ListKind: "NodeList",
			ShortNames: []string{"no"}, Prefix: "/registry/minions",
			Strategy: nodeStrategy, Subresources: []string{"status"}, DeleteCollection: true,
			SelectableFields: func(obj runtime.Object) fields.Set {
				return fields.Set{"spec.unschedulable": strconv.FormatBool(obj.(*corev1.Node).Spec.Unschedulable)}
			},
			Printer: nodePrinter,
			New:     func() runtime.Object { return &corev1.Node{} }, NewList: func() runtime.Object { return &corev1.NodeList{} },
		},
		{
			GroupVersion: coreV1, Name: "pods", SingularName: "pod", Kind: "Pod", ListKind: "PodList",
			ShortNames: []string{"po"}, Categories: []string{"all"}, Namespaced: true, Prefix: "/registry/pods",
			Strategy: podStrategy, Subresources: []string{"status"}, DeleteCollection: true,
			ContainerSubresources: []string{"log", "exec", "attach", "portforward"},
			SelectableFields:      podSelectableFields,
			// A kubelet lists and watches only its own pods.
			Indexes:        []registry.Index{{Field: "spec.nodeName", Value: func(obj runtime.Object) string { return obj.(*corev1.Pod).Spec.NodeName }}},
			WatchCacheSize: 5000,
			Printer:        podPrinter,
			New:            func() runtime.Object { return &corev1.Pod{} }, NewList: func() runtime.Object { return &corev1.PodList{} },
		},
		{
			GroupVersion: coreV1, Name: "configmaps", SingularName: "configmap", Kind: "ConfigMap", ListKind: "ConfigMapList",
			ShortNames: []string{"cm"}, Namespaced: true, Prefix: "/registry/configmaps",
			Strategy: configMapStrategy, DeleteCollection: true,
			Printer: configMapPrinter,
			New:     func() runtime.Object { return &corev1.ConfigMap{} }, NewList: func() runtime.Object { return &corev1.ConfigMapList{} },
		},
		{
			GroupVersion: coreV1, Name: "events", SingularName: "event", Kind: "Event", ListKind: "EventList",
			ShortNames: []string{"ev"}, Namespaced: true, Prefix: "/registry/events", TTL: registry.TTLEvent,
			Strategy: eventStrategy, AllowCreateOnUpdate: true, DeleteCollection: true, GarbageCollectorIgnored: true,
			SelectableFields: eventSelectableFields,
			Printer:          eventPrinter,
			New:              func() runtime.Object { return &corev1.Event{} }, NewList: func() runtime.Object { return &corev1.EventList{} },
		},
		{
			GroupVersion: coordinationV1, Name: "leases", SingularName: "lease", Kind: "Lease", ListKind: "LeaseList",
			Namespaced: true, Prefix: "/registry/leases",
			Strategy: leaseStrategy, AllowCreateOnUpdate: true, DeleteCollection: true,
			// Every node renews its Lease every 10 s.
			WatchCacheSize: 5000,
			Printer:        leasePrinter,
			New:            func() runtime.Object { return &coordinationv1.Lease{} }, NewList: func() runtime.Object { return &coordinationv1.LeaseList{} },
		},
	}
	resources = append(resources, coreKinds(services)...)
	resources = append(resources, workloadKinds()...)
	resources = append(resources, clusterKinds()...)
	return append(resources, apiextensionsKinds()...), nil
}

// NewTable returns a registry.Table of Builtin. It panics if the built-in
// entries are inconsistent: that is a bug in this package, caught by its
// tests.
func NewTable() *registry.Table {
	t, err := registry.NewTable(Builtin()...)
	if err != nil {
		panic(err)
	}
	return t
}

// NewTable returns a registry.Table of c's Builtin.
func (c Config) NewTable() (*registry.Table, error) {
	resources, err := c.Builtin()
	if err != nil {
		return nil, err
	}
	return registry.NewTable(resources...)
}

// podSelectableFields are upstream's pod fields for field selectors.
func podSelectableFields(obj runtime.Object) fields.Set {
	pod := obj.(*corev1.Pod)
	set := make(fields.Set, 8+registry.MetadataFieldCount) // one allocation, metadata fields included
	set["spec.nodeName"] = pod.Spec.NodeName
	set["spec.restartPolicy"] = string(pod.Spec.RestartPolicy)
	set["spec.schedulerName"] = pod.Spec.SchedulerName
	set["spec.serviceAccountName"] = pod.Spec.ServiceAccountName
	set["spec.hostNetwork"] = strconv.FormatBool(pod.Spec.HostNetwork)
	set["status.phase"] = string(pod.Status.Phase)
	set["status.podIP"] = pod.Status.PodIP
	set["status.nominatedNodeName"] = pod.Status.NominatedNodeName
	return set
}

// eventSelectableFields are upstream's event fields for field selectors.
func eventSelectableFields(obj runtime.Object) fields.Set {
	ev := obj.(*corev1.Event)
	return fields.Set{
		"involvedObject.kind":            ev.InvolvedObject.Kind,
		"involvedObject.namespace":       ev.InvolvedObject.Namespace,
		"involvedObject.name":            ev.InvolvedObject.Name,
		"involvedObject.uid":             string(ev.InvolvedObject.UID),
		"involvedObject.apiVersion":      ev.InvolvedObject.APIVersion,
		"involvedObject.resourceVersion": ev.InvolvedObject.ResourceVersion,
		"involvedObject.fieldPath":       ev.InvolvedObject.FieldPath,
		"reason":                         ev.Reason,
		"reportingComponent":             ev.ReportingController,
		"source":                         ev.Source.Component,
		"type":                           ev.Type,
	}
}
