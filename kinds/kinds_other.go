package kinds

// The defaults upstream sets on the other built-in kinds minicp serves:
// volumes and claims, endpoints, network policies, autoscalers, priority
// and storage classes, CSI drivers, admission webhooks, RBAC subjects.
// Each is a few lines of upstream's <group>/<version>/defaults.go.

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// defaultClaimSpec: a claim is for a filesystem unless it says block.
func defaultClaimSpec(spec *corev1.PersistentVolumeClaimSpec) {
	if spec.VolumeMode == nil {
		mode := corev1.PersistentVolumeFilesystem
		spec.VolumeMode = &mode
	}
}

// defaultPersistentVolume: Retain, Filesystem; a new volume is Pending.
func defaultPersistentVolume(pv *corev1.PersistentVolume) {
	if pv.Spec.PersistentVolumeReclaimPolicy == "" {
		pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	}
	if pv.Spec.VolumeMode == nil {
		mode := corev1.PersistentVolumeFilesystem
		pv.Spec.VolumeMode = &mode
	}
}

// defaultEndpoints: ports are TCP unless they say otherwise.
func defaultEndpoints(ep *corev1.Endpoints) {
	for i := range ep.Subsets {
		for j := range ep.Subsets[i].Ports {
			if p := &ep.Subsets[i].Ports[j]; p.Protocol == "" {
				p.Protocol = corev1.ProtocolTCP
			}
		}
	}
}

// defaultEndpointSlice: ports are TCP and unnamed unless they say otherwise.
func defaultEndpointSlice(es *discoveryv1.EndpointSlice) {
	for i := range es.Ports {
		p := &es.Ports[i]
		if p.Protocol == nil {
			tcp := corev1.ProtocolTCP
			p.Protocol = &tcp
		}
		if p.Name == nil {
			empty := ""
			p.Name = &empty
		}
	}
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

// defaultCPUUtilization is upstream's target when an HPA names no metric.
const defaultCPUUtilization = 80

// defaultHPA: at least 1 replica, 80% CPU when no metric is given, and
// upstream's scaling rules filled in where a behavior is given.
func defaultHPA(hpa *autoscalingv2.HorizontalPodAutoscaler) {
	spec := &hpa.Spec
	defaultInt32(&spec.MinReplicas, 1)
	if len(spec.Metrics) == 0 {
		spec.Metrics = []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{
				Type: autoscalingv2.UtilizationMetricType, AverageUtilization: int32Ptr(defaultCPUUtilization)}},
		}}
	}
	if b := spec.Behavior; b != nil {
		b.ScaleUp = defaultScalingRules(b.ScaleUp, 0, []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		})
		b.ScaleDown = defaultScalingRules(b.ScaleDown, 300, []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		})
	}
}

func defaultScalingRules(r *autoscalingv2.HPAScalingRules, window int32, policies []autoscalingv2.HPAScalingPolicy) *autoscalingv2.HPAScalingRules {
	if r == nil {
		r = &autoscalingv2.HPAScalingRules{}
	}
	defaultInt32(&r.StabilizationWindowSeconds, window)
	if r.SelectPolicy == nil {
		max := autoscalingv2.MaxChangePolicySelect
		r.SelectPolicy = &max
	}
	if len(r.Policies) == 0 {
		r.Policies = policies
	}
	return r
}

// defaultPriorityClass: a pod of this class may preempt lower ones.
func defaultPriorityClass(pc *schedulingv1.PriorityClass) {
	if pc.PreemptionPolicy == nil {
		policy := corev1.PreemptLowerPriority
		pc.PreemptionPolicy = &policy
	}
}

// defaultStorageClass: volumes are deleted with their claims and bound at once.
func defaultStorageClass(sc *storagev1.StorageClass) {
	if sc.ReclaimPolicy == nil {
		policy := corev1.PersistentVolumeReclaimDelete
		sc.ReclaimPolicy = &policy
	}
	if sc.VolumeBindingMode == nil {
		mode := storagev1.VolumeBindingImmediate
		sc.VolumeBindingMode = &mode
	}
}

// defaultCSIDriver: attach required, no pod info, persistent volumes,
// fsGroup applied for ReadWriteOnce volumes with a filesystem type.
func defaultCSIDriver(d *storagev1.CSIDriver) {
	spec := &d.Spec
	boolDefault := func(p **bool, v bool) {
		if *p == nil {
			*p = &v
		}
	}
	boolDefault(&spec.AttachRequired, true)
	boolDefault(&spec.PodInfoOnMount, false)
	boolDefault(&spec.StorageCapacity, false)
	boolDefault(&spec.RequiresRepublish, false)
	if spec.FSGroupPolicy == nil {
		policy := storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy
		spec.FSGroupPolicy = &policy
	}
	if len(spec.VolumeLifecycleModes) == 0 {
		spec.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}
	}
}

// defaultWebhook fills what upstream fills in each admission webhook:
// failurePolicy Fail, matchPolicy Equivalent, match-all selectors, 10 s
// timeout, rules for every scope, port 443.
func defaultWebhook(failure **admissionregistrationv1.FailurePolicyType, match **admissionregistrationv1.MatchPolicyType,
	ns, obj **metav1.LabelSelector, timeout **int32, rules []admissionregistrationv1.RuleWithOperations, cc *admissionregistrationv1.WebhookClientConfig) {
	if *failure == nil {
		fail := admissionregistrationv1.Fail
		*failure = &fail
	}
	if *match == nil {
		equivalent := admissionregistrationv1.Equivalent
		*match = &equivalent
	}
	if *ns == nil {
		*ns = &metav1.LabelSelector{}
	}
	if *obj == nil {
		*obj = &metav1.LabelSelector{}
	}
	defaultInt32(timeout, 10)
	for i := range rules {
		if rules[i].Scope == nil {
			all := admissionregistrationv1.AllScopes
			rules[i].Scope = &all
		}
	}
	if cc.Service != nil {
		defaultInt32(&cc.Service.Port, 443)
	}
}

func defaultValidatingWebhooks(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		defaultWebhook(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, w.Rules, &w.ClientConfig)
	}
}

func defaultMutatingWebhooks(c *admissionregistrationv1.MutatingWebhookConfiguration) {
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		defaultWebhook(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, w.Rules, &w.ClientConfig)
		if w.ReinvocationPolicy == nil {
			never := admissionregistrationv1.NeverReinvocationPolicy
			w.ReinvocationPolicy = &never
		}
	}
}

// defaultSubjects: users and groups belong to the RBAC API group.
func defaultSubjects(subjects []rbacv1.Subject) {
	for i := range subjects {
		s := &subjects[i]
		if s.APIGroup == "" && (s.Kind == rbacv1.UserKind || s.Kind == rbacv1.GroupKind) {
			s.APIGroup = rbacv1.GroupName
		}
	}
}
