package kinds

import (
	"fmt"
	"sort"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"minicp/registry"
)

// Columns and cells of the built-in kinds, as upstream's printers
// (k8s.io/kubernetes/pkg/printers/internalversion) define them, so kubectl
// output looks like a real cluster's. Pods have their own file.

var namespacePrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Status", Type: "string", Description: "The status of the namespace"},
		registry.AgeColumn,
	},
	func(ns *corev1.Namespace, now time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{ns.Name, string(ns.Status.Phase), age(ns.CreationTimestamp.Time, now)}}
	},
)

var configMapPrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Data", Type: "string", Description: corev1.ConfigMap{}.SwaggerDoc()["data"]},
		registry.AgeColumn,
	},
	func(cm *corev1.ConfigMap, now time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), age(cm.CreationTimestamp.Time, now)}}
	},
)

var leasePrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Holder", Type: "string", Description: coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]},
		registry.AgeColumn,
	},
	func(lease *coordinationv1.Lease, now time.Time) metav1.TableRow {
		holder := ""
		if lease.Spec.HolderIdentity != nil {
			holder = *lease.Spec.HolderIdentity
		}
		return metav1.TableRow{Cells: []any{lease.Name, holder, age(lease.CreationTimestamp.Time, now)}}
	},
)

var nodePrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Status", Type: "string", Description: "The status of the node"},
		{Name: "Roles", Type: "string", Description: "The roles of the node"},
		registry.AgeColumn,
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

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}

var eventPrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		{Name: "Last Seen", Type: "string", Description: corev1.Event{}.SwaggerDoc()["lastTimestamp"]},
		{Name: "Type", Type: "string", Description: corev1.Event{}.SwaggerDoc()["type"]},
		{Name: "Reason", Type: "string", Description: corev1.Event{}.SwaggerDoc()["reason"]},
		{Name: "Object", Type: "string", Description: corev1.Event{}.SwaggerDoc()["involvedObject"]},
		{Name: "Subobject", Type: "string", Priority: 1, Description: corev1.ObjectReference{}.SwaggerDoc()["fieldPath"]},
		{Name: "Source", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["source"]},
		{Name: "Message", Type: "string", Description: corev1.Event{}.SwaggerDoc()["message"]},
		{Name: "First Seen", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["firstTimestamp"]},
		{Name: "Count", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["count"]},
		{Name: "Name", Type: "string", Priority: 1, Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	},
	eventRow,
)

// eventRow prints an event as kubectl get events does. Events written
// through events.k8s.io carry eventTime and series instead of the
// first/last timestamps and count of core/v1, so both are read.
func eventRow(ev *corev1.Event, now time.Time) metav1.TableRow {
	firstSeen := age(ev.FirstTimestamp.Time, now)
	if ev.FirstTimestamp.IsZero() {
		firstSeen = age(ev.EventTime.Time, now)
	}
	lastSeen := age(ev.LastTimestamp.Time, now)
	if ev.LastTimestamp.IsZero() {
		lastSeen = firstSeen
	}
	count := ev.Count
	if ev.Series != nil {
		lastSeen = age(ev.Series.LastObservedTime.Time, now)
		count = ev.Series.Count
	} else if count == 0 {
		count = 1
	}
	object := strings.ToLower(ev.InvolvedObject.Kind)
	if ev.InvolvedObject.Name != "" {
		object = fmt.Sprintf("%s/%s", object, ev.InvolvedObject.Name)
	}
	return metav1.TableRow{Cells: []any{
		lastSeen, ev.Type, ev.Reason, object, ev.InvolvedObject.FieldPath, eventSource(ev),
		strings.TrimSpace(ev.Message), firstSeen, int64(count), ev.Name,
	}}
}

// eventSource is "component, host", falling back to the reporting
// controller and instance of newer events.
func eventSource(ev *corev1.Event) string {
	component, host := ev.Source.Component, ev.Source.Host
	if component == "" {
		component = ev.ReportingController
	}
	if host == "" {
		host = ev.ReportingInstance
	}
	if host == "" {
		return component
	}
	return component + ", " + host
}

// age prints how long ago t was as kubectl does ("5m", "3d4h"), or
// "<unknown>" for the zero time.
func age(t time.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}
