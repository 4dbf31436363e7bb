package kinds

// Deployments, ReplicaSets, StatefulSets, DaemonSets, ReplicationControllers
// and ControllerRevisions: the defaults clients read back, as upstream's
// apps/v1 and core/v1 defaulting sets them, and the main rules of upstream's
// validation. Their pod templates are defaulted and checked like pods.

import (
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func int32Ptr(v int32) *int32 { return &v }

func defaultInt32(p **int32, v int32) {
	if *p == nil {
		*p = int32Ptr(v)
	}
}

// defaultPodTemplate defaults a template's pod spec as a pod's.
func defaultPodTemplate(t *corev1.PodTemplateSpec) {
	if t != nil {
		defaultPodSpec(&t.Spec)
	}
}

// defaultDeployment: 1 replica, RollingUpdate with 25% unavailable and 25%
// surge, 10 old ReplicaSets kept, 600 s to progress.
func defaultDeployment(d *appsv1.Deployment) {
	defaultInt32(&d.Spec.Replicas, 1)
	s := &d.Spec.Strategy
	if s.Type == "" {
		s.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if s.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if s.RollingUpdate == nil {
			s.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		quarter := intstr.FromString("25%")
		if s.RollingUpdate.MaxUnavailable == nil {
			s.RollingUpdate.MaxUnavailable = &quarter
		}
		if s.RollingUpdate.MaxSurge == nil {
			s.RollingUpdate.MaxSurge = &quarter
		}
	}
	defaultInt32(&d.Spec.RevisionHistoryLimit, 10)
	defaultInt32(&d.Spec.ProgressDeadlineSeconds, 600)
	defaultPodTemplate(&d.Spec.Template)
}

func defaultReplicaSet(rs *appsv1.ReplicaSet) {
	defaultInt32(&rs.Spec.Replicas, 1)
	defaultPodTemplate(&rs.Spec.Template)
}

// defaultStatefulSet: OrderedReady pods, RollingUpdate from partition 0,
// claims retained, 1 replica, 10 revisions kept.
func defaultStatefulSet(ss *appsv1.StatefulSet) {
	spec := &ss.Spec
	if spec.PodManagementPolicy == "" {
		spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	if spec.UpdateStrategy.Type == "" {
		spec.UpdateStrategy.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if spec.UpdateStrategy.RollingUpdate == nil {
			spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
	}
	if ru := spec.UpdateStrategy.RollingUpdate; spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && ru != nil {
		defaultInt32(&ru.Partition, 0)
	}
	if spec.PersistentVolumeClaimRetentionPolicy == nil {
		spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	if p := spec.PersistentVolumeClaimRetentionPolicy; p.WhenDeleted == "" {
		p.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if p := spec.PersistentVolumeClaimRetentionPolicy; p.WhenScaled == "" {
		p.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	defaultInt32(&spec.Replicas, 1)
	defaultInt32(&spec.RevisionHistoryLimit, 10)
	defaultPodTemplate(&spec.Template)
	for i := range spec.VolumeClaimTemplates {
		defaultClaimSpec(&spec.VolumeClaimTemplates[i].Spec)
	}
}

// defaultDaemonSet: RollingUpdate, one pod unavailable at a time and no
// surge, 10 revisions kept.
func defaultDaemonSet(ds *appsv1.DaemonSet) {
	s := &ds.Spec.UpdateStrategy
	if s.Type == "" {
		s.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if s.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if s.RollingUpdate == nil {
			s.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if s.RollingUpdate.MaxUnavailable == nil {
			one := intstr.FromInt32(1)
			s.RollingUpdate.MaxUnavailable = &one
		}
		if s.RollingUpdate.MaxSurge == nil {
			zero := intstr.FromInt32(0)
			s.RollingUpdate.MaxSurge = &zero
		}
	}
	defaultInt32(&ds.Spec.RevisionHistoryLimit, 10)
	defaultPodTemplate(&ds.Spec.Template)
}

// defaultReplicationController: the selector and the object's labels are
// the template's labels when not given; 1 replica.
func defaultReplicationController(rc *corev1.ReplicationController) {
	if t := rc.Spec.Template; t != nil && t.Labels != nil {
		if len(rc.Spec.Selector) == 0 {
			rc.Spec.Selector = t.Labels
		}
		if len(rc.Labels) == 0 {
			rc.Labels = t.Labels
		}
	}
	defaultInt32(&rc.Spec.Replicas, 1)
	defaultPodTemplate(rc.Spec.Template)
}

// validateReplicas: a replica count is never negative.
func validateNonNegative(v *int32, path *field.Path) field.ErrorList {
	if v != nil && *v < 0 {
		return field.ErrorList{field.Invalid(path, int64(*v), "must be greater than or equal to 0")}
	}
	return nil
}

// validateWorkloadSelector checks a label selector that a workload needs:
// given, not empty, well formed. It returns the parsed selector.
func validateWorkloadSelector(sel *metav1.LabelSelector, path *field.Path) (labels.Selector, field.ErrorList) {
	if sel == nil {
		return nil, field.ErrorList{field.Required(path, "")}
	}
	errs := metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, path)
	if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(path, sel, "empty selector is invalid for deployment"))
	}
	parsed, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, append(errs, field.Invalid(path, sel, "invalid label selector"))
	}
	return parsed, errs
}

// validateTemplate checks a workload's pod template: its labels must be
// selected by the workload's selector, its spec is a valid pod spec, and
// its restart policy one of restartPolicies.
func validateTemplate(t *corev1.PodTemplateSpec, sel labels.Selector, path *field.Path, restartPolicies ...corev1.RestartPolicy) field.ErrorList {
	if t == nil {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	if sel != nil && !sel.Empty() && !sel.Matches(labels.Set(t.Labels)) {
		errs = append(errs, field.Invalid(path.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, metav1validation.ValidateLabels(t.Labels, path.Child("metadata", "labels"))...)
	errs = append(errs, validation.ValidateAnnotations(t.Annotations, path.Child("metadata", "annotations"))...)
	errs = append(errs, validatePodSpecAt(&t.Spec, path.Child("spec"))...)
	if len(restartPolicies) > 0 && !contains(restartPolicies, t.Spec.RestartPolicy) {
		errs = append(errs, field.NotSupported(path.Child("spec", "restartPolicy"), t.Spec.RestartPolicy, restartPolicies))
	}
	if t.Spec.ActiveDeadlineSeconds != nil && len(restartPolicies) == 1 && restartPolicies[0] == corev1.RestartPolicyAlways {
		errs = append(errs, field.Forbidden(path.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in ReplicaSet is not Supported"))
	}
	return errs
}

// validateDeployment checks what upstream checks first: replicas, the
// selector against the template's labels, the strategy, the deadlines.
func validateDeployment(d *appsv1.Deployment) field.ErrorList {
	spec, path := &d.Spec, field.NewPath("spec")
	errs := validateNonNegative(spec.Replicas, path.Child("replicas"))
	sel, selErrs := validateWorkloadSelector(spec.Selector, path.Child("selector"))
	errs = append(errs, selErrs...)
	errs = append(errs, validateTemplate(&spec.Template, sel, path.Child("template"), corev1.RestartPolicyAlways)...)
	errs = append(errs, validateDeploymentStrategy(&spec.Strategy, path.Child("strategy"))...)
	errs = append(errs, validateNonNegative(spec.RevisionHistoryLimit, path.Child("revisionHistoryLimit"))...)
	errs = append(errs, validateNonNegative(&spec.MinReadySeconds, path.Child("minReadySeconds"))...)
	if p := spec.ProgressDeadlineSeconds; p != nil {
		errs = append(errs, validateNonNegative(p, path.Child("progressDeadlineSeconds"))...)
		if *p <= spec.MinReadySeconds {
			errs = append(errs, field.Invalid(path.Child("progressDeadlineSeconds"), *p, "must be greater than minReadySeconds"))
		}
	}
	return errs
}

func validateDeploymentStrategy(s *appsv1.DeploymentStrategy, path *field.Path) field.ErrorList {
	switch s.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if s.RollingUpdate != nil {
			return field.ErrorList{field.Forbidden(path.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'")}
		}
	case appsv1.RollingUpdateDeploymentStrategyType:
		if s.RollingUpdate == nil {
			return field.ErrorList{field.Required(path.Child("rollingUpdate"), "this should be defaulted and never be nil")}
		}
		return validateSurge(s.RollingUpdate.MaxUnavailable, s.RollingUpdate.MaxSurge, path.Child("rollingUpdate"))
	default:
		return field.ErrorList{field.NotSupported(path.Child("type"), s.Type,
			[]appsv1.DeploymentStrategyType{appsv1.RecreateDeploymentStrategyType, appsv1.RollingUpdateDeploymentStrategyType})}
	}
	return nil
}

// validateSurge: each a non-negative count or a percentage up to 100%;
// not both zero, or a rollout could never make progress.
func validateSurge(maxUnavailable, maxSurge *intstr.IntOrString, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateIntOrPercent(maxUnavailable, path.Child("maxUnavailable"))...)
	errs = append(errs, validateIntOrPercent(maxSurge, path.Child("maxSurge"))...)
	if isZero(maxUnavailable) && isZero(maxSurge) {
		errs = append(errs, field.Invalid(path.Child("maxUnavailable"), maxUnavailable.String(), "may not be 0 when `maxSurge` is 0"))
	}
	return errs
}

func isZero(v *intstr.IntOrString) bool {
	if v == nil {
		return true
	}
	if v.Type == intstr.Int {
		return v.IntVal == 0
	}
	return strings.TrimSuffix(v.StrVal, "%") == "0"
}

func validateIntOrPercent(v *intstr.IntOrString, path *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	if v.Type == intstr.Int {
		return validateNonNegative(&v.IntVal, path)
	}
	n, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	if !strings.HasSuffix(v.StrVal, "%") || err != nil {
		return field.ErrorList{field.Invalid(path, v.StrVal, "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")}
	}
	if n < 0 || n > 100 {
		return field.ErrorList{field.Invalid(path, v.StrVal, "must not be greater than 100%")}
	}
	return nil
}

// validateSelectorUnchanged: in apps/v1 a workload's selector is immutable.
func validateSelectorUnchanged(sel, old *metav1.LabelSelector) field.ErrorList {
	return validation.ValidateImmutableField(sel, old, field.NewPath("spec", "selector"))
}

func validateReplicaSet(rs *appsv1.ReplicaSet) field.ErrorList {
	path := field.NewPath("spec")
	errs := validateNonNegative(rs.Spec.Replicas, path.Child("replicas"))
	sel, selErrs := validateWorkloadSelector(rs.Spec.Selector, path.Child("selector"))
	errs = append(errs, selErrs...)
	return append(errs, validateTemplate(&rs.Spec.Template, sel, path.Child("template"), corev1.RestartPolicyAlways)...)
}

func validateReplicationController(rc *corev1.ReplicationController) field.ErrorList {
	path := field.NewPath("spec")
	errs := validateNonNegative(rc.Spec.Replicas, path.Child("replicas"))
	if len(rc.Spec.Selector) == 0 {
		errs = append(errs, field.Required(path.Child("selector"), ""))
	}
	errs = append(errs, metav1validation.ValidateLabels(rc.Spec.Selector, path.Child("selector"))...)
	sel := labels.SelectorFromSet(rc.Spec.Selector)
	return append(errs, validateTemplate(rc.Spec.Template, sel, path.Child("template"), corev1.RestartPolicyAlways)...)
}

func validateStatefulSet(ss *appsv1.StatefulSet) field.ErrorList {
	spec, path := &ss.Spec, field.NewPath("spec")
	errs := validateNonNegative(spec.Replicas, path.Child("replicas"))
	sel, selErrs := validateWorkloadSelector(spec.Selector, path.Child("selector"))
	errs = append(errs, selErrs...)
	errs = append(errs, validateTemplate(&spec.Template, sel, path.Child("template"), corev1.RestartPolicyAlways)...)
	policies := []appsv1.PodManagementPolicyType{appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement}
	if !contains(policies, spec.PodManagementPolicy) {
		errs = append(errs, field.NotSupported(path.Child("podManagementPolicy"), spec.PodManagementPolicy, policies))
	}
	strategies := []appsv1.StatefulSetUpdateStrategyType{appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType}
	if !contains(strategies, spec.UpdateStrategy.Type) {
		errs = append(errs, field.NotSupported(path.Child("updateStrategy", "type"), spec.UpdateStrategy.Type, strategies))
	}
	if spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType && spec.UpdateStrategy.RollingUpdate != nil {
		errs = append(errs, field.Invalid(path.Child("updateStrategy", "rollingUpdate"), spec.UpdateStrategy.RollingUpdate,
			fmt.Sprintf("only allowed for updateStrategy '%s'", appsv1.RollingUpdateStatefulSetStrategyType)))
	}
	if spec.ServiceName != "" {
		for _, msg := range utilvalidation.IsDNS1123Label(spec.ServiceName) {
			errs = append(errs, field.Invalid(path.Child("serviceName"), spec.ServiceName, msg))
		}
	}
	return errs
}

// statefulSetUpdateForbiddenMsg is upstream's refusal of other changes.
const statefulSetUpdateForbiddenMsg = "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', " +
	"'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"

// validateStatefulSetUpdate: only some fields of a StatefulSet may change.
func validateStatefulSetUpdate(ss, old *appsv1.StatefulSet) field.ErrorList {
	spec := old.Spec.DeepCopy()
	spec.Replicas, spec.Ordinals, spec.Template = ss.Spec.Replicas, ss.Spec.Ordinals, ss.Spec.Template
	spec.UpdateStrategy, spec.RevisionHistoryLimit = ss.Spec.UpdateStrategy, ss.Spec.RevisionHistoryLimit
	spec.PersistentVolumeClaimRetentionPolicy, spec.MinReadySeconds = ss.Spec.PersistentVolumeClaimRetentionPolicy, ss.Spec.MinReadySeconds
	if !equalSemantic(spec, &ss.Spec) {
		return field.ErrorList{field.Forbidden(field.NewPath("spec"), statefulSetUpdateForbiddenMsg)}
	}
	return nil
}

func validateDaemonSet(ds *appsv1.DaemonSet) field.ErrorList {
	spec, path := &ds.Spec, field.NewPath("spec")
	sel, errs := validateWorkloadSelector(spec.Selector, path.Child("selector"))
	errs = append(errs, validateTemplate(&spec.Template, sel, path.Child("template"), corev1.RestartPolicyAlways)...)
	s := &spec.UpdateStrategy
	switch s.Type {
	case appsv1.OnDeleteDaemonSetStrategyType:
	case appsv1.RollingUpdateDaemonSetStrategyType:
		if s.RollingUpdate == nil {
			errs = append(errs, field.Required(path.Child("updateStrategy", "rollingUpdate"), ""))
			break
		}
		errs = append(errs, validateSurge(s.RollingUpdate.MaxUnavailable, s.RollingUpdate.MaxSurge, path.Child("updateStrategy", "rollingUpdate"))...)
	default:
		errs = append(errs, field.NotSupported(path.Child("updateStrategy", "type"), s.Type,
			[]appsv1.DaemonSetUpdateStrategyType{appsv1.OnDeleteDaemonSetStrategyType, appsv1.RollingUpdateDaemonSetStrategyType}))
	}
	return errs
}

// validateControllerRevision: a revision is never negative, and its data
// is immutable (upstream: only metadata may change).
func validateControllerRevision(cr *appsv1.ControllerRevision) field.ErrorList {
	if cr.Revision < 0 {
		return field.ErrorList{field.Invalid(field.NewPath("revision"), cr.Revision, "must be greater than or equal to 0")}
	}
	return nil
}

func validateControllerRevisionUpdate(cr, old *appsv1.ControllerRevision) field.ErrorList {
	errs := validation.ValidateImmutableField(cr.Data, old.Data, field.NewPath("data"))
	return append(errs, validation.ValidateImmutableField(cr.Revision, old.Revision, field.NewPath("revision"))...)
}

func equalSemantic(a, b any) bool { return equality.Semantic.DeepEqual(a, b) }
