package kinds

// Services: upstream's defaults (type ClusterIP, sessionAffinity None, port
// protocol TCP, targetPort = port, traffic policies), the main rules of
// upstream's Service validation, and the write hooks that give a Service
// its addresses (core_services_alloc.go).

import (
	"fmt"
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"net"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// servicesEntry describes the services resource (core/v1 Service). As
// upstream, a collection of Services cannot be deleted at once.
func servicesEntry(services serviceRanges) *registry.Resource {
	return withoutDeleteCollection(entry(apigroups.CoreV1, "services", "Service", true, "/registry/services/specs",
		func() runtime.Object { return &corev1.Service{} }, func() runtime.Object { return &corev1.ServiceList{} },
		&registry.Resource{ShortNames: []string{"svc"}, Categories: []string{"all"}, Strategy: newServiceStrategy(services),
			Subresources: []string{"status"}, Printer: servicePrinter}))
}

// defaultSessionAffinityTimeout is upstream's ClientIP affinity timeout (3 h).
const defaultSessionAffinityTimeout = 10800

func defaultService(svc *corev1.Service) {
	spec := &svc.Spec
	if spec.SessionAffinity == "" {
		spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	if spec.SessionAffinity == corev1.ServiceAffinityClientIP && (spec.SessionAffinityConfig == nil ||
		spec.SessionAffinityConfig.ClientIP == nil || spec.SessionAffinityConfig.ClientIP.TimeoutSeconds == nil) {
		timeout := int32(defaultSessionAffinityTimeout)
		spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: &timeout}}
	}
	if spec.Type == "" {
		spec.Type = corev1.ServiceTypeClusterIP
	}
	for i := range spec.Ports {
		p := &spec.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == intstr.FromInt32(0) || p.TargetPort == intstr.FromString("") {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
	if (spec.Type == corev1.ServiceTypeNodePort || spec.Type == corev1.ServiceTypeLoadBalancer) && spec.ExternalTrafficPolicy == "" {
		spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if spec.Type != corev1.ServiceTypeExternalName && spec.InternalTrafficPolicy == nil {
		cluster := corev1.ServiceInternalTrafficPolicyCluster
		spec.InternalTrafficPolicy = &cluster
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer && spec.AllocateLoadBalancerNodePorts == nil {
		allocate := true
		spec.AllocateLoadBalancerNodePorts = &allocate
	}
}

// needsNodePorts reports whether the Service's ports get NodePorts.
func needsNodePorts(svc *corev1.Service) bool {
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeLoadBalancer:
		return svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts
	}
	return false
}

// keepServiceAddresses carries a Service's assigned addresses over an update
// that does not mention them (kubectl apply of a manifest without a
// clusterIP), as upstream's Service strategy does.
func keepServiceAddresses(svc, old *corev1.Service) {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || old.Spec.Type == corev1.ServiceTypeExternalName {
		return
	}
	if svc.Spec.ClusterIP == "" && len(svc.Spec.ClusterIPs) == 0 {
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs = old.Spec.ClusterIP, old.Spec.ClusterIPs
	}
	if len(svc.Spec.IPFamilies) == 0 {
		svc.Spec.IPFamilies = old.Spec.IPFamilies
	}
	if svc.Spec.IPFamilyPolicy == nil {
		svc.Spec.IPFamilyPolicy = old.Spec.IPFamilyPolicy
	}
	if !needsNodePorts(svc) {
		return
	}
	oldPorts := map[string]int32{}
	for _, p := range old.Spec.Ports {
		oldPorts[fmt.Sprintf("%s/%d", p.Protocol, p.Port)] = p.NodePort
	}
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		if p.NodePort == 0 {
			p.NodePort = oldPorts[fmt.Sprintf("%s/%d", p.Protocol, p.Port)]
		}
	}
}

var serviceTypes = []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeExternalName, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort}

var serviceProtocols = []corev1.Protocol{corev1.ProtocolSCTP, corev1.ProtocolTCP, corev1.ProtocolUDP}

var sessionAffinities = []corev1.ServiceAffinity{corev1.ServiceAffinityClientIP, corev1.ServiceAffinityNone}

// isHeadless reports whether the Service asks for no ClusterIP.
func isHeadless(svc *corev1.Service) bool { return svc.Spec.ClusterIP == corev1.ClusterIPNone }

// validateService checks the type, the ports (valid numbers and
// protocols, unique names when there are several, no NodePort on a
// ClusterIP Service), the session affinity and the addresses.
func validateService(svc *corev1.Service) field.ErrorList {
	spec, path := &svc.Spec, field.NewPath("spec")
	var errs field.ErrorList
	if !contains(serviceTypes, spec.Type) {
		errs = append(errs, field.NotSupported(path.Child("type"), spec.Type, serviceTypes))
	}
	if len(spec.Ports) == 0 && !isHeadless(svc) && spec.Type != corev1.ServiceTypeExternalName {
		errs = append(errs, field.Required(path.Child("ports"), ""))
	}
	errs = append(errs, validateServicePorts(svc, path.Child("ports"))...)
	if !contains(sessionAffinities, spec.SessionAffinity) {
		errs = append(errs, field.NotSupported(path.Child("sessionAffinity"), spec.SessionAffinity, sessionAffinities))
	}
	if spec.Type == corev1.ServiceTypeExternalName {
		if spec.ClusterIP != "" {
			errs = append(errs, field.Forbidden(path.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
		if spec.ExternalName == "" {
			errs = append(errs, field.Required(path.Child("externalName"), ""))
		}
		for _, msg := range utilvalidation.IsDNS1123Subdomain(spec.ExternalName) {
			errs = append(errs, field.Invalid(path.Child("externalName"), spec.ExternalName, msg))
		}
	}
	for i, ip := range spec.ClusterIPs {
		if ip != corev1.ClusterIPNone && net.ParseIP(ip) == nil {
			errs = append(errs, field.Invalid(path.Child("clusterIPs").Index(i), ip, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff) or 'None'"))
		}
	}
	if spec.ClusterIP != "" && len(spec.ClusterIPs) > 0 && spec.ClusterIP != spec.ClusterIPs[0] {
		errs = append(errs, field.Invalid(path.Child("clusterIPs").Index(0), spec.ClusterIPs, "must be equal to clusterIP"))
	}
	return errs
}

func validateServicePorts(svc *corev1.Service, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	names, seen := sets.New[string](), sets.New[string]()
	for i, p := range svc.Spec.Ports {
		pp := path.Index(i)
		switch {
		case p.Name == "" && len(svc.Spec.Ports) > 1:
			errs = append(errs, field.Required(pp.Child("name"), ""))
		case p.Name != "":
			for _, msg := range utilvalidation.IsDNS1123Label(p.Name) {
				errs = append(errs, field.Invalid(pp.Child("name"), p.Name, msg))
			}
			if names.Has(p.Name) {
				errs = append(errs, field.Duplicate(pp.Child("name"), p.Name))
			}
			names.Insert(p.Name)
		}
		for _, msg := range utilvalidation.IsValidPortNum(int(p.Port)) {
			errs = append(errs, field.Invalid(pp.Child("port"), p.Port, msg))
		}
		if !contains(serviceProtocols, p.Protocol) {
			errs = append(errs, field.NotSupported(pp.Child("protocol"), p.Protocol, serviceProtocols))
		}
		errs = append(errs, validatePortNumOrName(p.TargetPort, pp.Child("targetPort"))...)
		if p.NodePort != 0 {
			if svc.Spec.Type == corev1.ServiceTypeClusterIP {
				errs = append(errs, field.Forbidden(pp.Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
			}
			for _, msg := range utilvalidation.IsValidPortNum(int(p.NodePort)) {
				errs = append(errs, field.Invalid(pp.Child("nodePort"), p.NodePort, msg))
			}
		}
		key := fmt.Sprintf("%s/%d", p.Protocol, p.Port)
		if seen.Has(key) {
			errs = append(errs, field.Duplicate(pp, key))
		}
		seen.Insert(key)
	}
	return errs
}

// validatePortNumOrName: a port number, or the name of a container port.
func validatePortNumOrName(port intstr.IntOrString, path *field.Path) field.ErrorList {
	var msgs []string
	if port.Type == intstr.Int {
		msgs = utilvalidation.IsValidPortNum(port.IntValue())
	} else {
		msgs = utilvalidation.IsValidPortName(port.StrVal)
	}
	var errs field.ErrorList
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(path, port.String(), msg))
	}
	return errs
}

// validateServiceUpdate: an assigned ClusterIP cannot change (a Service
// becoming or leaving ExternalName gets or loses its address instead).
func validateServiceUpdate(svc, old *corev1.Service) field.ErrorList {
	if old.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	path := field.NewPath("spec")
	errs := validation.ValidateImmutableField(svc.Spec.ClusterIP, old.Spec.ClusterIP, path.Child("clusterIP"))
	if len(old.Spec.ClusterIPs) > 0 && (len(svc.Spec.ClusterIPs) == 0 || svc.Spec.ClusterIPs[0] != old.Spec.ClusterIPs[0]) {
		errs = append(errs, field.Invalid(path.Child("clusterIPs").Index(0), svc.Spec.ClusterIPs, "may not change once set"))
	}
	return errs
}

// newServiceStrategy returns the Services' rules, whose write hooks
// allocate from ranges. Service names are DNS-1035 labels: they become
// DNS names.
func newServiceStrategy(ranges serviceRanges) *rest.Strategy {
	st := kindStrategy(kindRules[*corev1.Service]{
		name: validation.NameIsDNS1035Label, defaults: defaultService,
		validate: validateService, validateUpdate: validateServiceUpdate,
	})
	st.BeginWrite, st.AfterDelete = ranges.beginServiceWrite, ranges.afterServiceDelete
	prepare := st.PrepareForUpdate
	st.PrepareForUpdate = func(obj, old runtime.Object) {
		keepServiceAddresses(obj.(*corev1.Service), old.(*corev1.Service))
		prepare(obj, old)
	}
	return st
}

var servicePrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		column("Type", "string", corev1.ServiceSpec{}.SwaggerDoc()["type"], 0),
		column("Cluster-IP", "string", corev1.ServiceSpec{}.SwaggerDoc()["clusterIP"], 0),
		column("External-IP", "string", corev1.ServiceSpec{}.SwaggerDoc()["externalIPs"], 0),
		column("Port(s)", "string", corev1.ServiceSpec{}.SwaggerDoc()["ports"], 0),
		rest.AgeColumn,
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
