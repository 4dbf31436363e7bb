package kinds

// `kubectl get` columns for networking, policy, RBAC, scheduling, storage
// and admission kinds, as upstream's printers define them.

import (
	"fmt"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"minicp/registry"
)

var ingressPrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn,
		column("Class", "string", networkingv1.IngressSpec{}.SwaggerDoc()["ingressClassName"], 0),
		column("Hosts", "string", "Hosts that incoming requests are matched against before the ingress rule", 0),
		column("Address", "string", "Address is a list containing ingress points for the load-balancer", 0),
		column("Ports", "string", "Ports of TLS configurations that open", 0),
		registry.AgeColumn,
	},
	func(ing *networkingv1.Ingress, now time.Time) metav1.TableRow {
		var hosts, addrs []string
		for _, r := range ing.Spec.Rules {
			if r.Host != "" {
				hosts = append(hosts, r.Host)
			}
		}
		host := "*"
		if len(hosts) > 0 {
			host = shortList(hosts)
		}
		for _, in := range ing.Status.LoadBalancer.Ingress {
			if in.IP != "" {
				addrs = append(addrs, in.IP)
			} else if in.Hostname != "" {
				addrs = append(addrs, in.Hostname)
			}
		}
		ports := "80"
		if len(ing.Spec.TLS) != 0 {
			ports = "80, 443"
		}
		return metav1.TableRow{Cells: []any{
			ing.Name, deref(ing.Spec.IngressClassName, "<none>"), host, strings.Join(addrs, ","), ports, age(ing.CreationTimestamp.Time, now),
		}}
	},
)

var ingressClassPrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn,
		column("Controller", "string", networkingv1.IngressClassSpec{}.SwaggerDoc()["controller"], 0),
		column("Parameters", "string", networkingv1.IngressClassSpec{}.SwaggerDoc()["parameters"], 0),
		registry.AgeColumn,
	},
	func(ic *networkingv1.IngressClass, now time.Time) metav1.TableRow {
		params := "<none>"
		if p := ic.Spec.Parameters; p != nil {
			group := "core"
			if p.APIGroup != nil {
				group = *p.APIGroup
			}
			params = fmt.Sprintf("%s.%s/%s", strings.ToLower(p.Kind), group, p.Name)
		}
		return metav1.TableRow{Cells: []any{ic.Name, ic.Spec.Controller, params, age(ic.CreationTimestamp.Time, now)}}
	},
)

var networkPolicyPrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn, column("Pod-Selector", "string", networkingv1.NetworkPolicySpec{}.SwaggerDoc()["podSelector"], 0), registry.AgeColumn,
	},
	func(np *networkingv1.NetworkPolicy, now time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{np.Name, metav1.FormatLabelSelector(&np.Spec.PodSelector), age(np.CreationTimestamp.Time, now)}}
	},
)

var pdbPrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn,
		column("Min Available", "string", "The minimum number of pods that must be available.", 0),
		column("Max Unavailable", "string", "The maximum number of pods that may be unavailable.", 0),
		column("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this time.", 0),
		registry.AgeColumn,
	},
	func(pdb *policyv1.PodDisruptionBudget, now time.Time) metav1.TableRow {
		minAvailable, maxUnavailable := "N/A", "N/A"
		if v := pdb.Spec.MinAvailable; v != nil {
			minAvailable = v.String()
		}
		if v := pdb.Spec.MaxUnavailable; v != nil {
			maxUnavailable = v.String()
		}
		return metav1.TableRow{Cells: []any{pdb.Name, minAvailable, maxUnavailable, int64(pdb.Status.DisruptionsAllowed), age(pdb.CreationTimestamp.Time, now)}}
	},
)

// rolePrinter: roles and cluster roles show their creation time.
var rolePrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{registry.NameColumn, createdAtColumn},
	func(m metav1.Object, _ time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{m.GetName(), createdAt(m)}}
	},
)

var bindingColumns = []metav1.TableColumnDefinition{
	registry.NameColumn,
	column("Role", "string", rbacv1.RoleBinding{}.SwaggerDoc()["roleRef"], 0),
	registry.AgeColumn,
	column("Users", "string", "Users in the roleBinding", 1),
	column("Groups", "string", "Groups in the roleBinding", 1),
	column("ServiceAccounts", "string", "ServiceAccounts in the roleBinding", 1),
}

// bindingRow prints a role binding's role and subjects by kind.
func bindingRow(m metav1.Object, ref rbacv1.RoleRef, subjects []rbacv1.Subject, now time.Time) metav1.TableRow {
	var users, groups, sas []string
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		case rbacv1.ServiceAccountKind:
			sas = append(sas, s.Namespace+"/"+s.Name)
		}
	}
	return metav1.TableRow{Cells: []any{
		m.GetName(), ref.Kind + "/" + ref.Name, age(m.GetCreationTimestamp().Time, now),
		strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", "),
	}}
}

var roleBindingPrinter = registry.TypedPrinter(bindingColumns, func(rb *rbacv1.RoleBinding, now time.Time) metav1.TableRow {
	return bindingRow(rb, rb.RoleRef, rb.Subjects, now)
})

var clusterRoleBindingPrinter = registry.TypedPrinter(bindingColumns, func(rb *rbacv1.ClusterRoleBinding, now time.Time) metav1.TableRow {
	return bindingRow(rb, rb.RoleRef, rb.Subjects, now)
})

var priorityClassPrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn,
		column("Value", "integer", schedulingv1.PriorityClass{}.SwaggerDoc()["value"], 0),
		column("Global-Default", "boolean", schedulingv1.PriorityClass{}.SwaggerDoc()["globalDefault"], 0),
		registry.AgeColumn,
		column("PreemptionPolicy", "string", schedulingv1.PriorityClass{}.SwaggerDoc()["preemptionPolicy"], 0),
	},
	func(pc *schedulingv1.PriorityClass, now time.Time) metav1.TableRow {
		policy := "<unset>"
		if pc.PreemptionPolicy != nil {
			policy = string(*pc.PreemptionPolicy)
		}
		return metav1.TableRow{Cells: []any{pc.Name, int64(pc.Value), pc.GlobalDefault, age(pc.CreationTimestamp.Time, now), policy}}
	},
)

var storageClassPrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn,
		column("Provisioner", "string", storagev1.StorageClass{}.SwaggerDoc()["provisioner"], 0),
		column("ReclaimPolicy", "string", storagev1.StorageClass{}.SwaggerDoc()["reclaimPolicy"], 0),
		column("VolumeBindingMode", "string", storagev1.StorageClass{}.SwaggerDoc()["volumeBindingMode"], 0),
		column("AllowVolumeExpansion", "string", storagev1.StorageClass{}.SwaggerDoc()["allowVolumeExpansion"], 0),
		registry.AgeColumn,
	},
	func(sc *storagev1.StorageClass, now time.Time) metav1.TableRow {
		name := sc.Name
		if sc.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" {
			name += " (default)"
		}
		reclaim, binding := string(corev1.PersistentVolumeReclaimDelete), string(storagev1.VolumeBindingImmediate)
		if sc.ReclaimPolicy != nil {
			reclaim = string(*sc.ReclaimPolicy)
		}
		if sc.VolumeBindingMode != nil {
			binding = string(*sc.VolumeBindingMode)
		}
		return metav1.TableRow{Cells: []any{
			name, sc.Provisioner, reclaim, binding, sc.AllowVolumeExpansion != nil && *sc.AllowVolumeExpansion, age(sc.CreationTimestamp.Time, now),
		}}
	},
)

var csiDriverPrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn,
		column("AttachRequired", "boolean", storagev1.CSIDriverSpec{}.SwaggerDoc()["attachRequired"], 0),
		column("PodInfoOnMount", "boolean", storagev1.CSIDriverSpec{}.SwaggerDoc()["podInfoOnMount"], 0),
		column("StorageCapacity", "boolean", storagev1.CSIDriverSpec{}.SwaggerDoc()["storageCapacity"], 0),
		column("TokenRequests", "string", storagev1.CSIDriverSpec{}.SwaggerDoc()["tokenRequests"], 0),
		column("RequiresRepublish", "boolean", storagev1.CSIDriverSpec{}.SwaggerDoc()["requiresRepublish"], 0),
		column("Modes", "string", storagev1.CSIDriverSpec{}.SwaggerDoc()["volumeLifecycleModes"], 0),
		registry.AgeColumn,
	},
	func(d *storagev1.CSIDriver, now time.Time) metav1.TableRow {
		flag := func(b *bool) bool { return b != nil && *b }
		var audiences, modes []string
		for _, t := range d.Spec.TokenRequests {
			audiences = append(audiences, t.Audience)
		}
		for _, m := range d.Spec.VolumeLifecycleModes {
			modes = append(modes, string(m))
		}
		tokens := "<unset>"
		if len(audiences) > 0 {
			tokens = strings.Join(audiences, ",")
		}
		return metav1.TableRow{Cells: []any{
			d.Name, flag(d.Spec.AttachRequired), flag(d.Spec.PodInfoOnMount), flag(d.Spec.StorageCapacity), tokens,
			flag(d.Spec.RequiresRepublish), strings.Join(modes, ","), age(d.CreationTimestamp.Time, now),
		}}
	},
)

var csiNodePrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn, column("Drivers", "integer", "Drivers indicates the number of CSI drivers registered on the node", 0), registry.AgeColumn,
	},
	func(n *storagev1.CSINode, now time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{n.Name, int64(len(n.Spec.Drivers)), age(n.CreationTimestamp.Time, now)}}
	},
)

var volumeAttachmentPrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn,
		column("Attacher", "string", storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["attacher"], 0),
		column("PV", "string", storagev1.VolumeAttachmentSource{}.SwaggerDoc()["persistentVolumeName"], 0),
		column("Node", "string", storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["nodeName"], 0),
		column("Attached", "boolean", storagev1.VolumeAttachmentStatus{}.SwaggerDoc()["attached"], 0),
		registry.AgeColumn,
	},
	func(va *storagev1.VolumeAttachment, now time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{
			va.Name, va.Spec.Attacher, deref(va.Spec.Source.PersistentVolumeName, ""), va.Spec.NodeName, va.Status.Attached, age(va.CreationTimestamp.Time, now),
		}}
	},
)

var webhookColumns = []metav1.TableColumnDefinition{
	registry.NameColumn, column("Webhooks", "integer", "Webhooks indicates the number of webhooks registered in this configuration", 0), registry.AgeColumn,
}

var validatingWebhookPrinter = registry.TypedPrinter(webhookColumns, func(c *admissionregistrationv1.ValidatingWebhookConfiguration, now time.Time) metav1.TableRow {
	return metav1.TableRow{Cells: []any{c.Name, int64(len(c.Webhooks)), age(c.CreationTimestamp.Time, now)}}
})

var mutatingWebhookPrinter = registry.TypedPrinter(webhookColumns, func(c *admissionregistrationv1.MutatingWebhookConfiguration, now time.Time) metav1.TableRow {
	return metav1.TableRow{Cells: []any{c.Name, int64(len(c.Webhooks)), age(c.CreationTimestamp.Time, now)}}
})

// eventsV1Printer prints events.k8s.io/v1 Events with the core/v1 Event
// columns, as upstream does (they are one object).
var eventsV1Printer = &registry.Printer{Columns: eventPrinter.Columns, Row: func(obj runtime.Object, now time.Time) (metav1.TableRow, error) {
	ev, ok := obj.(*eventsv1.Event)
	if !ok {
		return metav1.TableRow{}, fmt.Errorf("table printer for events.k8s.io cannot print %T", obj)
	}
	return eventRow(coreEventFromV1(ev), now), nil
}}
