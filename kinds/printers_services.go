package kinds

// `kubectl get` columns for the core kinds around pods, as upstream's
// printers define them: Services, Endpoints, EndpointSlices, Secrets,
// ServiceAccounts, volumes and claims, quotas and limit ranges.

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"minicp/registry"
)

// createdAtColumn is the column of printers that show only the name and
// the creation time.
var createdAtColumn = column("Created At", "date", metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"], 0)

func createdAt(m metav1.Object) string {
	return m.GetCreationTimestamp().UTC().Format(time.RFC3339)
}

var servicePrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn,
		column("Type", "string", corev1.ServiceSpec{}.SwaggerDoc()["type"], 0),
		column("Cluster-IP", "string", corev1.ServiceSpec{}.SwaggerDoc()["clusterIP"], 0),
		column("External-IP", "string", corev1.ServiceSpec{}.SwaggerDoc()["externalIPs"], 0),
		column("Port(s)", "string", corev1.ServiceSpec{}.SwaggerDoc()["ports"], 0),
		registry.AgeColumn,
		column("Selector", "string", corev1.ServiceSpec{}.SwaggerDoc()["selector"], 1),
	},
	func(svc *corev1.Service, now time.Time) metav1.TableRow {
		clusterIP := svc.Spec.ClusterIP
		if clusterIP == "" {
			clusterIP = "<none>"
		}
		return metav1.TableRow{Cells: []any{
			svc.Name, string(svc.Spec.Type), clusterIP, serviceExternalIP(svc), servicePorts(svc.Spec.Ports),
			age(svc.CreationTimestamp.Time, now), orNone(labels.FormatLabels(svc.Spec.Selector)),
		}}
	},
)

// serviceExternalIP is the External-IP column: the external name, the
// load balancer's addresses ("<pending>" until it has one) or the
// external IPs.
func serviceExternalIP(svc *corev1.Service) string {
	ips := append([]string{}, svc.Spec.ExternalIPs...)
	switch svc.Spec.Type {
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	case corev1.ServiceTypeLoadBalancer:
		for _, in := range svc.Status.LoadBalancer.Ingress {
			if in.IP != "" {
				ips = append(ips, in.IP)
			} else if in.Hostname != "" {
				ips = append(ips, in.Hostname)
			}
		}
		if len(ips) == 0 {
			return "<pending>"
		}
	}
	if len(ips) == 0 {
		return "<none>"
	}
	return strings.Join(ips, ",")
}

// servicePorts prints "80/TCP,443:30443/TCP".
func servicePorts(ports []corev1.ServicePort) string {
	if len(ports) == 0 {
		return "<none>"
	}
	var out []string
	for _, p := range ports {
		s := fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		if p.NodePort > 0 {
			s = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		}
		out = append(out, s)
	}
	return strings.Join(out, ",")
}

// maxShownEndpoints is how many addresses kubectl shows before "+ N more...".
const maxShownEndpoints = 3

// shortList joins the first few items and says how many more there are.
func shortList(items []string) string {
	if len(items) == 0 {
		return "<none>"
	}
	if len(items) <= maxShownEndpoints {
		return strings.Join(items, ",")
	}
	return strings.Join(items[:maxShownEndpoints], ",") + fmt.Sprintf(" + %d more...", len(items)-maxShownEndpoints)
}

var endpointsPrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn, column("Endpoints", "string", corev1.Endpoints{}.SwaggerDoc()["subsets"], 0), registry.AgeColumn,
	},
	func(ep *corev1.Endpoints, now time.Time) metav1.TableRow {
		var addrs []string
		for _, ss := range ep.Subsets {
			for _, a := range ss.Addresses {
				if len(ss.Ports) == 0 {
					addrs = append(addrs, a.IP)
				}
				for _, p := range ss.Ports {
					addrs = append(addrs, fmt.Sprintf("%s:%d", a.IP, p.Port))
				}
			}
		}
		return metav1.TableRow{Cells: []any{ep.Name, shortList(addrs), age(ep.CreationTimestamp.Time, now)}}
	},
)

var endpointSlicePrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn,
		column("AddressType", "string", discoveryv1.EndpointSlice{}.SwaggerDoc()["addressType"], 0),
		column("Ports", "string", discoveryv1.EndpointSlice{}.SwaggerDoc()["ports"], 0),
		column("Endpoints", "string", discoveryv1.EndpointSlice{}.SwaggerDoc()["endpoints"], 0),
		registry.AgeColumn,
	},
	func(es *discoveryv1.EndpointSlice, now time.Time) metav1.TableRow {
		var ports, addrs []string
		for _, p := range es.Ports {
			if p.Port != nil {
				ports = append(ports, fmt.Sprint(*p.Port))
			}
		}
		for _, e := range es.Endpoints {
			addrs = append(addrs, e.Addresses...)
		}
		portList := "<unset>"
		if len(ports) > 0 {
			portList = strings.Join(ports, ",")
		}
		return metav1.TableRow{Cells: []any{es.Name, string(es.AddressType), portList, shortList(addrs), age(es.CreationTimestamp.Time, now)}}
	},
)

var secretPrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn,
		column("Type", "string", corev1.Secret{}.SwaggerDoc()["type"], 0),
		column("Data", "string", corev1.Secret{}.SwaggerDoc()["data"], 0),
		registry.AgeColumn,
	},
	func(s *corev1.Secret, now time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{s.Name, string(s.Type), int64(len(s.Data)), age(s.CreationTimestamp.Time, now)}}
	},
)

var serviceAccountPrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn, column("Secrets", "string", corev1.ServiceAccount{}.SwaggerDoc()["secrets"], 0), registry.AgeColumn,
	},
	func(sa *corev1.ServiceAccount, now time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{sa.Name, int64(len(sa.Secrets)), age(sa.CreationTimestamp.Time, now)}}
	},
)

// accessModes prints "RWO,ROX" as kubectl does.
func accessModes(modes []corev1.PersistentVolumeAccessMode) string {
	short := map[corev1.PersistentVolumeAccessMode]string{
		corev1.ReadWriteOnce: "RWO", corev1.ReadOnlyMany: "ROX", corev1.ReadWriteMany: "RWX", corev1.ReadWriteOncePod: "RWOP",
	}
	var out []string
	for _, m := range modes {
		out = append(out, short[m])
	}
	return strings.Join(out, ",")
}

func volumeMode(m *corev1.PersistentVolumeMode) string {
	if m == nil {
		return "<unset>"
	}
	return string(*m)
}

func deref(s *string, unset string) string {
	if s == nil {
		return unset
	}
	return *s
}

var claimPrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn,
		column("Status", "string", corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["phase"], 0),
		column("Volume", "string", corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeName"], 0),
		column("Capacity", "string", corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["capacity"], 0),
		column("Access Modes", "string", corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["accessModes"], 0),
		column("StorageClass", "string", "StorageClass of the pvc", 0),
		column("VolumeAttributesClass", "string", corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeAttributesClassName"], 0),
		registry.AgeColumn,
		column("VolumeMode", "string", corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeMode"], 1),
	},
	func(pvc *corev1.PersistentVolumeClaim, now time.Time) metav1.TableRow {
		phase := string(pvc.Status.Phase)
		if pvc.DeletionTimestamp != nil {
			phase = "Terminating"
		}
		capacity := ""
		if q, ok := pvc.Status.Capacity[corev1.ResourceStorage]; ok {
			capacity = q.String()
		}
		return metav1.TableRow{Cells: []any{
			pvc.Name, phase, pvc.Spec.VolumeName, capacity, accessModes(pvc.Status.AccessModes),
			deref(pvc.Spec.StorageClassName, ""), deref(pvc.Spec.VolumeAttributesClassName, "<unset>"),
			age(pvc.CreationTimestamp.Time, now), volumeMode(pvc.Spec.VolumeMode),
		}}
	},
)

var volumePrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn,
		column("Capacity", "string", corev1.PersistentVolumeSpec{}.SwaggerDoc()["capacity"], 0),
		column("Access Modes", "string", corev1.PersistentVolumeSpec{}.SwaggerDoc()["accessModes"], 0),
		column("Reclaim Policy", "string", corev1.PersistentVolumeSpec{}.SwaggerDoc()["persistentVolumeReclaimPolicy"], 0),
		column("Status", "string", corev1.PersistentVolumeStatus{}.SwaggerDoc()["phase"], 0),
		column("Claim", "string", corev1.PersistentVolumeSpec{}.SwaggerDoc()["claimRef"], 0),
		column("StorageClass", "string", "StorageClass of the pv", 0),
		column("VolumeAttributesClass", "string", corev1.PersistentVolumeSpec{}.SwaggerDoc()["volumeAttributesClassName"], 0),
		column("Reason", "string", corev1.PersistentVolumeStatus{}.SwaggerDoc()["reason"], 0),
		registry.AgeColumn,
		column("VolumeMode", "string", corev1.PersistentVolumeSpec{}.SwaggerDoc()["volumeMode"], 1),
	},
	func(pv *corev1.PersistentVolume, now time.Time) metav1.TableRow {
		claim := ""
		if ref := pv.Spec.ClaimRef; ref != nil {
			claim = ref.Namespace + "/" + ref.Name
		}
		capacity := ""
		if q, ok := pv.Spec.Capacity[corev1.ResourceStorage]; ok {
			capacity = q.String()
		}
		phase := string(pv.Status.Phase)
		if pv.DeletionTimestamp != nil {
			phase = "Terminating"
		}
		return metav1.TableRow{Cells: []any{
			pv.Name, capacity, accessModes(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy), phase, claim,
			pv.Spec.StorageClassName, deref(pv.Spec.VolumeAttributesClassName, "<unset>"), pv.Status.Reason,
			age(pv.CreationTimestamp.Time, now), volumeMode(pv.Spec.VolumeMode),
		}}
	},
)

var resourceQuotaPrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{
		registry.NameColumn, registry.AgeColumn,
		column("Request", "string", "Request represents a minimum amount of cpu/memory that a container may consume.", 0),
		column("Limit", "string", "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.", 0),
	},
	func(q *corev1.ResourceQuota, now time.Time) metav1.TableRow {
		var requests, limits []string
		names := make([]string, 0, len(q.Spec.Hard))
		for name := range q.Spec.Hard {
			names = append(names, string(name))
		}
		sort.Strings(names)
		for _, name := range names {
			hard := q.Spec.Hard[corev1.ResourceName(name)]
			used := q.Status.Used[corev1.ResourceName(name)]
			entry := fmt.Sprintf("%s: %s/%s", name, used.String(), hard.String())
			if strings.HasPrefix(name, "limits.") {
				limits = append(limits, entry)
			} else {
				requests = append(requests, entry)
			}
		}
		return metav1.TableRow{Cells: []any{q.Name, age(q.CreationTimestamp.Time, now), strings.Join(requests, ", "), strings.Join(limits, ", ")}}
	},
)

var limitRangePrinter = registry.TypedPrinter(
	[]metav1.TableColumnDefinition{registry.NameColumn, createdAtColumn},
	func(lr *corev1.LimitRange, _ time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{lr.Name, createdAt(lr)}}
	},
)
