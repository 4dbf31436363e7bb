package kinds

// Nodes: their defaults, taints and `kubectl get` columns.

import (
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// nodesEntry describes the nodes resource (core/v1 Node), at upstream's
// historical prefix.
func nodesEntry() *registry.Resource {
	return entry(apigroups.CoreV1, "nodes", "Node", false, "/registry/minions",
		func() runtime.Object { return &corev1.Node{} }, func() runtime.Object { return &corev1.NodeList{} },
		&registry.Resource{ShortNames: []string{"no"}, Strategy: nodeStrategy, Subresources: []string{"status"},
			Printer: nodePrinter, SelectableFields: func(obj runtime.Object) fields.Set {
				return fields.Set{"spec.unschedulable": strconv.FormatBool(obj.(*corev1.Node).Spec.Unschedulable)}
			}})
}

var nodePrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		{Name: "Status", Type: "string", Description: "The status of the node"},
		{Name: "Roles", Type: "string", Description: "The roles of the node"},
		rest.AgeColumn,
		{Name: "Version", Type: "string", Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kubeletVersion"]},
		{Name: "Internal-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
		{Name: "External-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
		{Name: "OS-Image", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["osImage"]},
		{Name: "Kernel-Version", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kernelVersion"]},
		{Name: "Container-Runtime", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["containerRuntimeVersion"]},
	},
	func(node *corev1.Node, now time.Time) metav1.TableRow {
		info := node.Status.NodeInfo
		return metav1.TableRow{Cells: []any{
			node.Name, nodeStatus(node), nodeRoles(node), age(node.CreationTimestamp.Time, now), info.KubeletVersion,
			nodeAddress(node, corev1.NodeInternalIP), nodeAddress(node, corev1.NodeExternalIP),
			orUnknown(info.OSImage), orUnknown(info.KernelVersion), orUnknown(info.ContainerRuntimeVersion),
		}}
	},
)

// nodeStatus is "Ready", "NotReady" or "Unknown" (no Ready condition at
// all), with ",SchedulingDisabled" for a cordoned node. A Ready condition
// whose status is Unknown (the kubelet stopped posting) prints NotReady.
func nodeStatus(node *corev1.Node) string {
	status := "Unknown"
	for _, c := range node.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		status = "NotReady"
		if c.Status == corev1.ConditionTrue {
			status = "Ready"
		}
	}
	if node.Spec.Unschedulable {
		status += ",SchedulingDisabled"
	}
	return status
}

// nodeRoles lists the roles named by node-role.kubernetes.io/<role> labels
// and by the older kubernetes.io/role=<role> label, sorted, or "<none>".
func nodeRoles(node *corev1.Node) string {
	roles := map[string]bool{}
	for k, v := range node.Labels {
		switch {
		case strings.HasPrefix(k, "node-role.kubernetes.io/") && k != "node-role.kubernetes.io/":
			roles[strings.TrimPrefix(k, "node-role.kubernetes.io/")] = true
		case k == "kubernetes.io/role" && v != "":
			roles[v] = true
		}
	}
	if len(roles) == 0 {
		return "<none>"
	}
	names := make([]string, 0, len(roles))
	for r := range roles {
		names = append(names, r)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// nodeAddress is the node's first address of type t, or "<none>".
func nodeAddress(node *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range node.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return "<none>"
}

// nodeStrategy: a kubelet registers its node with a status, so create keeps
// it; a main update keeps the stored status, a status update the spec.
var nodeStrategy = &rest.Strategy{
	ValidateName:     validation.NameIsDNSSubdomain,
	PrepareForCreate: func(obj runtime.Object) { defaultNodeStatus(&obj.(*corev1.Node).Status) },
	PrepareForUpdate: func(obj, old runtime.Object) {
		obj.(*corev1.Node).Status = old.(*corev1.Node).Status
	},
	PrepareForStatusUpdate: func(obj, old runtime.Object) {
		node := obj.(*corev1.Node)
		node.Spec = old.(*corev1.Node).Spec
		defaultNodeStatus(&node.Status)
	},
	Validate: func(obj runtime.Object) field.ErrorList { return validateTaints(obj.(*corev1.Node).Spec.Taints) },
}

// defaultNodeStatus makes allocatable default to capacity, as upstream.
func defaultNodeStatus(status *corev1.NodeStatus) {
	if len(status.Allocatable) == 0 && len(status.Capacity) > 0 {
		status.Allocatable = status.Capacity.DeepCopy()
	}
}

func validateTaints(taints []corev1.Taint) field.ErrorList {
	var errs field.ErrorList
	effects := []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}
	for i, t := range taints {
		p := field.NewPath("spec", "taints").Index(i)
		for _, msg := range utilvalidation.IsQualifiedName(t.Key) {
			errs = append(errs, field.Invalid(p.Child("key"), t.Key, msg))
		}
		if !contains(effects, t.Effect) {
			errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, effects))
		}
	}
	return errs
}
