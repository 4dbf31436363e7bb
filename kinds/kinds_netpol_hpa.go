package kinds

// NetworkPolicies and HorizontalPodAutoscalers: the main rules of
// upstream's validation (ports, peers and CIDRs of a policy; the target,
// replica bounds, metrics and scaling rules of an autoscaler). minicp
// enforces no policy and scales nothing.

import (
	"net"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	policyProtocols = []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP}
	policyTypes     = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}
)

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
		for _, msg := range validation.IsValidPortNum(int(port.Port.IntVal)) {
			errs = append(errs, field.Invalid(p.Child("port"), port.Port.IntVal, msg))
		}
		if port.EndPort != nil {
			if *port.EndPort < port.Port.IntVal {
				errs = append(errs, field.Invalid(p.Child("endPort"), port.Port.IntVal, "must be greater than or equal to `port`"))
			}
			for _, msg := range validation.IsValidPortNum(int(*port.EndPort)) {
				errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, msg))
			}
		}
	default:
		if port.EndPort != nil {
			errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "may not be specified when `port` is non-numeric"))
		}
		for _, msg := range validation.IsValidPortName(port.Port.StrVal) {
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
	errs := validation.IsValidCIDR(p.Child("cidr"), b.CIDR)
	_, cidr, err := net.ParseCIDR(b.CIDR)
	if err != nil {
		return errs
	}
	cidrBits, _ := cidr.Mask.Size()
	for i, except := range b.Except {
		ep := p.Child("except").Index(i)
		errs = append(errs, validation.IsValidCIDR(ep, except)...)
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

// Limits of an autoscaler's scaling rules, as upstream's.
const (
	maxStabilizationWindowSeconds = 3600
	maxScalingPeriodSeconds       = 1800
)

func validateHPA(hpa *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	spec, p := &hpa.Spec, field.NewPath("spec")
	var errs field.ErrorList
	if spec.MinReplicas != nil && *spec.MinReplicas < 1 {
		errs = append(errs, field.Invalid(p.Child("minReplicas"), *spec.MinReplicas, "must be greater than or equal to 1"))
	}
	if spec.MaxReplicas < 1 {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), spec.MaxReplicas, "must be greater than 0"))
	}
	if spec.MinReplicas != nil && spec.MaxReplicas < *spec.MinReplicas {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), spec.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	if refErrs := validateScaleTargetRef(spec.ScaleTargetRef, p.Child("scaleTargetRef")); len(refErrs) > 0 {
		errs = append(errs, refErrs...)
	} else {
		for i := range spec.Metrics {
			errs = append(errs, validateMetric(&spec.Metrics[i], p.Child("metrics").Index(i))...)
		}
	}
	if b := spec.Behavior; b != nil {
		errs = append(errs, validateScalingRules(b.ScaleUp, p.Child("behavior", "scaleUp"))...)
		errs = append(errs, validateScalingRules(b.ScaleDown, p.Child("behavior", "scaleDown"))...)
	}
	return errs
}

func validateScaleTargetRef(ref autoscalingv2.CrossVersionObjectReference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct{ name, value string }{{"kind", ref.Kind}, {"name", ref.Name}} {
		if f.value == "" {
			errs = append(errs, field.Required(p.Child(f.name), ""))
			continue
		}
		for _, msg := range path.IsValidPathSegmentName(f.value) {
			errs = append(errs, field.Invalid(p.Child(f.name), f.value, msg))
		}
	}
	return errs
}

// validateMetric: a known type with its own source, and only that one.
func validateMetric(m *autoscalingv2.MetricSpec, p *field.Path) field.ErrorList {
	sources := map[autoscalingv2.MetricSourceType]bool{
		autoscalingv2.ObjectMetricSourceType: m.Object != nil, autoscalingv2.PodsMetricSourceType: m.Pods != nil,
		autoscalingv2.ResourceMetricSourceType: m.Resource != nil, autoscalingv2.ContainerResourceMetricSourceType: m.ContainerResource != nil,
		autoscalingv2.ExternalMetricSourceType: m.External != nil,
	}
	set := 0
	for _, ok := range sources {
		if ok {
			set++
		}
	}
	switch given, known := sources[m.Type]; {
	case m.Type == "":
		return field.ErrorList{field.Required(p.Child("type"), "must specify a metric source type")}
	case !known:
		return field.ErrorList{field.NotSupported(p.Child("type"), m.Type, []autoscalingv2.MetricSourceType{
			autoscalingv2.ContainerResourceMetricSourceType, autoscalingv2.ExternalMetricSourceType, autoscalingv2.ObjectMetricSourceType,
			autoscalingv2.PodsMetricSourceType, autoscalingv2.ResourceMetricSourceType})}
	case !given:
		return field.ErrorList{field.Required(p, "must populate information for the given metric source")}
	case set > 1:
		return field.ErrorList{field.Forbidden(p, "must populate the given metric source only")}
	}
	switch {
	case m.Resource != nil:
		return validateResourceMetric(m.Resource.Name, m.Resource.Target, p.Child("resource"))
	case m.ContainerResource != nil:
		errs := validateResourceMetric(m.ContainerResource.Name, m.ContainerResource.Target, p.Child("containerResource"))
		if m.ContainerResource.Container == "" {
			errs = append(errs, field.Required(p.Child("containerResource", "container"), "must specify a container"))
		}
		return errs
	case m.Pods != nil:
		return validateMetricTarget(m.Pods.Target, p.Child("pods", "target"))
	case m.Object != nil:
		return validateMetricTarget(m.Object.Target, p.Child("object", "target"))
	default:
		return validateMetricTarget(m.External.Target, p.Child("external", "target"))
	}
}

func validateResourceMetric(name corev1.ResourceName, target autoscalingv2.MetricTarget, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(p.Child("name"), "must specify a resource name"))
	}
	errs = append(errs, validateMetricTarget(target, p.Child("target"))...)
	if target.AverageValue == nil && target.AverageUtilization == nil {
		errs = append(errs, field.Required(p.Child("target", "averageUtilization"), "must set either a target raw value or a target utilization"))
	}
	if target.AverageValue != nil && target.AverageUtilization != nil {
		errs = append(errs, field.Forbidden(p.Child("target", "averageValue"), "may not set both a target raw value and a target utilization"))
	}
	return errs
}

// validateMetricTarget: a known target type; values and utilization
// above zero.
func validateMetricTarget(t autoscalingv2.MetricTarget, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	types := []autoscalingv2.MetricTargetType{autoscalingv2.UtilizationMetricType, autoscalingv2.ValueMetricType, autoscalingv2.AverageValueMetricType}
	if t.Type == "" {
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric target type"))
	} else if !contains(types, t.Type) {
		errs = append(errs, field.Invalid(p.Child("type"), t.Type, "must be either Utilization, Value, or AverageValue"))
	}
	if t.Value != nil && t.Value.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("value"), t.Value.String(), "must be positive"))
	}
	if t.AverageValue != nil && t.AverageValue.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("averageValue"), t.AverageValue.String(), "must be positive"))
	}
	if t.AverageUtilization != nil && *t.AverageUtilization < 1 {
		errs = append(errs, field.Invalid(p.Child("averageUtilization"), *t.AverageUtilization, "must be greater than 0"))
	}
	return errs
}

// validateScalingRules: a stabilization window of 0 to 3600 s, a known
// select policy, and at least one policy of a known type, a value above 0
// and a period of 1 to 1800 s.
func validateScalingRules(r *autoscalingv2.HPAScalingRules, p *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if w := r.StabilizationWindowSeconds; w != nil && (*w < 0 || *w > maxStabilizationWindowSeconds) {
		errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), *w, validation.InclusiveRangeError(0, maxStabilizationWindowSeconds)))
	}
	selects := []autoscalingv2.ScalingPolicySelect{autoscalingv2.MaxChangePolicySelect, autoscalingv2.MinChangePolicySelect, autoscalingv2.DisabledPolicySelect}
	if s := r.SelectPolicy; s != nil && !contains(selects, *s) {
		errs = append(errs, field.NotSupported(p.Child("selectPolicy"), *s, selects))
	}
	if len(r.Policies) == 0 {
		errs = append(errs, field.Required(p.Child("policies"), "must specify at least one Policy"))
	}
	kinds := []autoscalingv2.HPAScalingPolicyType{autoscalingv2.PodsScalingPolicy, autoscalingv2.PercentScalingPolicy}
	for i, pol := range r.Policies {
		pp := p.Child("policies").Index(i)
		if !contains(kinds, pol.Type) {
			errs = append(errs, field.NotSupported(pp.Child("type"), pol.Type, kinds))
		}
		if pol.Value <= 0 {
			errs = append(errs, field.Invalid(pp.Child("value"), pol.Value, "must be greater than zero"))
		}
		if pol.PeriodSeconds <= 0 || pol.PeriodSeconds > maxScalingPeriodSeconds {
			errs = append(errs, field.Invalid(pp.Child("periodSeconds"), pol.PeriodSeconds, validation.InclusiveRangeError(1, maxScalingPeriodSeconds)))
		}
	}
	return errs
}
