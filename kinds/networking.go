package kinds

// Ingresses, IngressClasses and NetworkPolicies (networking.k8s.io/v1):
// upstream's defaults, the main rules of NetworkPolicy validation (ports,
// peers and CIDRs), and columns. minicp enforces no policy.

import (
	"fmt"
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"net"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ingressesEntry describes the ingresses resource (networking.k8s.io/v1 Ingress).
func ingressesEntry() *registry.Resource {
	return entry(apigroups.NetworkingV1, "ingresses", "Ingress", true, "/registry/ingress",
		func() runtime.Object { return &networkingv1.Ingress{} }, func() runtime.Object { return &networkingv1.IngressList{} },
		&registry.Resource{ShortNames: []string{"ing"}, Strategy: ingressStrategy, Subresources: []string{"status"}, Printer: ingressPrinter})
}

// ingressClassesEntry describes the ingressclasses resource (networking.k8s.io/v1 IngressClass).
func ingressClassesEntry() *registry.Resource {
	return entry(apigroups.NetworkingV1, "ingressclasses", "IngressClass", false, "/registry/ingressclasses",
		func() runtime.Object { return &networkingv1.IngressClass{} }, func() runtime.Object { return &networkingv1.IngressClassList{} },
		&registry.Resource{Strategy: ingressClassStrategy, Printer: ingressClassPrinter})
}

// networkPoliciesEntry describes the networkpolicies resource (networking.k8s.io/v1 NetworkPolicy).
func networkPoliciesEntry() *registry.Resource {
	return entry(apigroups.NetworkingV1, "networkpolicies", "NetworkPolicy", true, "/registry/networkpolicies",
		func() runtime.Object { return &networkingv1.NetworkPolicy{} }, func() runtime.Object { return &networkingv1.NetworkPolicyList{} },
		&registry.Resource{ShortNames: []string{"netpol"}, Strategy: networkPolicyStrategy, Printer: networkPolicyPrinter})
}

var policyProtocols = []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP}

var policyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}

func validateNetworkPolicy(np *networkingv1.NetworkPolicy) field.ErrorList {
	spec, p := &np.Spec, field.NewPath("spec")
	errs := metav1validation.ValidateLabelSelector(&spec.PodSelector, metav1validation.LabelSelectorValidationOptions{}, p.Child("podSelector"))
	for i, rule := range spec.Ingress {
		errs = append(errs, validatePolicyRule(rule.Ports, rule.From, p.Child("ingress").Index(i), "from")...)
	}
	for i, rule := range spec.Egress {
		errs = append(errs, validatePolicyRule(rule.Ports, rule.To, p.Child("egress").Index(i), "to")...)
	}
	if len(spec.PolicyTypes) > len(policyTypes) {
		return append(errs, field.Invalid(p.Child("policyTypes"), spec.PolicyTypes, "may not specify more than two policyTypes"))
	}
	for i, t := range spec.PolicyTypes {
		if !contains(policyTypes, t) {
			errs = append(errs, field.NotSupported(p.Child("policyTypes").Index(i), t, policyTypes))
		}
	}
	return errs
}

func validatePolicyRule(ports []networkingv1.NetworkPolicyPort, peers []networkingv1.NetworkPolicyPeer, p *field.Path, peersName string) field.ErrorList {
	var errs field.ErrorList
	for i := range ports {
		errs = append(errs, validatePolicyPort(&ports[i], p.Child("ports").Index(i))...)
	}
	for i := range peers {
		errs = append(errs, validatePolicyPeer(&peers[i], p.Child(peersName).Index(i))...)
	}
	return errs
}

// validatePolicyPort: a known protocol; a port number or name; endPort
// only after a port number, and not below it.
func validatePolicyPort(port *networkingv1.NetworkPolicyPort, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if port.Protocol != nil && !contains(policyProtocols, *port.Protocol) {
		errs = append(errs, field.NotSupported(p.Child("protocol"), *port.Protocol, policyProtocols))
	}
	switch {
	case port.Port == nil:
		if port.EndPort != nil {
			errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "may not be specified when `port` is not specified"))
		}
	case port.Port.Type == intstr.Int:
		for _, msg := range utilvalidation.IsValidPortNum(int(port.Port.IntVal)) {
			errs = append(errs, field.Invalid(p.Child("port"), port.Port.IntVal, msg))
		}
		if port.EndPort != nil {
			if *port.EndPort < port.Port.IntVal {
				errs = append(errs, field.Invalid(p.Child("endPort"), port.Port.IntVal, "must be greater than or equal to `port`"))
			}
			for _, msg := range utilvalidation.IsValidPortNum(int(*port.EndPort)) {
				errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, msg))
			}
		}
	default:
		if port.EndPort != nil {
			errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "may not be specified when `port` is non-numeric"))
		}
		for _, msg := range utilvalidation.IsValidPortName(port.Port.StrVal) {
			errs = append(errs, field.Invalid(p.Child("port"), port.Port.StrVal, msg))
		}
	}
	return errs
}

// validatePolicyPeer: pods and/or namespaces by selector, or an IP block
// alone.
func validatePolicyPeer(peer *networkingv1.NetworkPolicyPeer, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	opts := metav1validation.LabelSelectorValidationOptions{}
	if peer.PodSelector != nil {
		n++
		errs = append(errs, metav1validation.ValidateLabelSelector(peer.PodSelector, opts, p.Child("podSelector"))...)
	}
	if peer.NamespaceSelector != nil {
		n++
		errs = append(errs, metav1validation.ValidateLabelSelector(peer.NamespaceSelector, opts, p.Child("namespaceSelector"))...)
	}
	if peer.IPBlock != nil {
		n++
		errs = append(errs, validateIPBlock(peer.IPBlock, p.Child("ipBlock"))...)
	}
	switch {
	case n == 0:
		errs = append(errs, field.Required(p, "must specify a peer"))
	case n > 1 && peer.IPBlock != nil:
		errs = append(errs, field.Forbidden(p, "may not specify both ipBlock and another peer"))
	}
	return errs
}

// validateIPBlock: a CIDR, and exceptions strictly inside it.
func validateIPBlock(b *networkingv1.IPBlock, p *field.Path) field.ErrorList {
	if b.CIDR == "" {
		return field.ErrorList{field.Required(p.Child("cidr"), "")}
	}
	errs := utilvalidation.IsValidCIDR(p.Child("cidr"), b.CIDR)
	_, cidr, err := net.ParseCIDR(b.CIDR)
	if err != nil {
		return errs
	}
	cidrBits, _ := cidr.Mask.Size()
	for i, except := range b.Except {
		ep := p.Child("except").Index(i)
		errs = append(errs, utilvalidation.IsValidCIDR(ep, except)...)
		_, inner, err := net.ParseCIDR(except)
		if err != nil {
			continue
		}
		if innerBits, _ := inner.Mask.Size(); !cidr.Contains(inner.IP) || cidrBits >= innerBits {
			errs = append(errs, field.Invalid(ep, except, "must be a strict subset of `cidr`"))
		}
	}
	return errs
}

// defaultNetworkPolicy: ports are TCP; a policy always covers Ingress, and
// Egress too when it has egress rules.
func defaultNetworkPolicy(np *networkingv1.NetworkPolicy) {
	for _, rule := range np.Spec.Ingress {
		defaultPolicyPorts(rule.Ports)
	}
	for _, rule := range np.Spec.Egress {
		defaultPolicyPorts(rule.Ports)
	}
	if len(np.Spec.PolicyTypes) == 0 {
		np.Spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if len(np.Spec.Egress) != 0 {
			np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		}
	}
}

func defaultPolicyPorts(ports []networkingv1.NetworkPolicyPort) {
	for i := range ports {
		if ports[i].Protocol == nil {
			tcp := corev1.ProtocolTCP
			ports[i].Protocol = &tcp
		}
	}
}

var networkPolicyStrategy = kindStrategy(kindRules[*networkingv1.NetworkPolicy]{defaults: defaultNetworkPolicy, validate: validateNetworkPolicy})

var ingressStrategy = kindStrategy(kindRules[*networkingv1.Ingress]{})

var ingressClassStrategy = kindStrategy(kindRules[*networkingv1.IngressClass]{})

var ingressPrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		column("Class", "string", networkingv1.IngressSpec{}.SwaggerDoc()["ingressClassName"], 0),
		column("Hosts", "string", "Hosts that incoming requests are matched against before the ingress rule", 0),
		column("Address", "string", "Address is a list containing ingress points for the load-balancer", 0),
		column("Ports", "string", "Ports of TLS configurations that open", 0),
		rest.AgeColumn,
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

var ingressClassPrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		column("Controller", "string", networkingv1.IngressClassSpec{}.SwaggerDoc()["controller"], 0),
		column("Parameters", "string", networkingv1.IngressClassSpec{}.SwaggerDoc()["parameters"], 0),
		rest.AgeColumn,
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

var networkPolicyPrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn, column("Pod-Selector", "string", networkingv1.NetworkPolicySpec{}.SwaggerDoc()["podSelector"], 0), rest.AgeColumn,
	},
	func(np *networkingv1.NetworkPolicy, now time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{np.Name, metav1.FormatLabelSelector(&np.Spec.PodSelector), age(np.CreationTimestamp.Time, now)}}
	},
)
