package kinds

// HorizontalPodAutoscalers (autoscaling/v2): upstream's defaults and the
// main rules of its validation (the target, replica bounds, metrics and
// scaling rules). minicp scales nothing.

import (
	"fmt"
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// horizontalPodAutoscalersEntry describes the horizontalpodautoscalers resource (autoscaling/v2 HorizontalPodAutoscaler).
func horizontalPodAutoscalersEntry() *registry.Resource {
	return entry(apigroups.AutoscalingV2, "horizontalpodautoscalers", "HorizontalPodAutoscaler", true, "/registry/horizontalpodautoscalers",
		func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} },
		func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscalerList{} },
		&registry.Resource{ShortNames: []string{"hpa"}, Categories: []string{"all"}, Strategy: hpaStrategy,
			Subresources: []string{"status"}, Printer: hpaPrinter})
}

const maxStabilizationWindowSeconds = 3600

const maxScalingPeriodSeconds = 1800

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
		errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), *w, utilvalidation.InclusiveRangeError(0, maxStabilizationWindowSeconds)))
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
			errs = append(errs, field.Invalid(pp.Child("periodSeconds"), pol.PeriodSeconds, utilvalidation.InclusiveRangeError(1, maxScalingPeriodSeconds)))
		}
	}
	return errs
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

var hpaStrategy = kindStrategy(kindRules[*autoscalingv2.HorizontalPodAutoscaler]{
	name: validation.NameIsDNSSubdomain, defaults: defaultHPA, validate: validateHPA,
})

var hpaPrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		column("Reference", "string", autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["scaleTargetRef"], 0),
		column("Targets", "string", autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["metrics"], 0),
		column("MinPods", "string", autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["minReplicas"], 0),
		column("MaxPods", "integer", autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["maxReplicas"], 0),
		column("Replicas", "integer", autoscalingv2.HorizontalPodAutoscalerStatus{}.SwaggerDoc()["currentReplicas"], 0),
		rest.AgeColumn,
	},
	func(hpa *autoscalingv2.HorizontalPodAutoscaler, now time.Time) metav1.TableRow {
		ref := hpa.Spec.ScaleTargetRef
		minPods := "<unset>"
		if hpa.Spec.MinReplicas != nil {
			minPods = fmt.Sprint(*hpa.Spec.MinReplicas)
		}
		return metav1.TableRow{Cells: []any{
			hpa.Name, ref.Kind + "/" + ref.Name, hpaTargets(hpa), minPods, int64(hpa.Spec.MaxReplicas),
			int64(hpa.Status.CurrentReplicas), age(hpa.CreationTimestamp.Time, now),
		}}
	},
)

// hpaTargets prints each metric's target as "<unknown>/80%" or
// "<unknown>/500m" (minicp runs no metrics pipeline: current values are
// never known).
func hpaTargets(hpa *autoscalingv2.HorizontalPodAutoscaler) string {
	var out []string
	for _, m := range hpa.Spec.Metrics {
		target := "<unknown>"
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil {
			switch t := m.Resource.Target; {
			case t.AverageUtilization != nil:
				target = fmt.Sprintf("%d%%", *t.AverageUtilization)
			case t.AverageValue != nil:
				target = t.AverageValue.String()
			}
			target = fmt.Sprintf("%s: <unknown>/%s", m.Resource.Name, target)
		}
		out = append(out, target)
	}
	if len(out) == 0 {
		return "<none>"
	}
	return strings.Join(out, ", ")
}
