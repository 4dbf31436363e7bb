package kinds

// StatefulSets (apps/v1): upstream's defaults, validation (and what an
// update may change) and columns.

import (
	"fmt"
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// statefulSetsEntry describes the statefulsets resource (apps/v1 StatefulSet).
func statefulSetsEntry() *registry.Resource {
	return entry(apigroups.AppsV1, "statefulsets", "StatefulSet", true, "/registry/statefulsets",
		func() runtime.Object { return &appsv1.StatefulSet{} }, func() runtime.Object { return &appsv1.StatefulSetList{} },
		&registry.Resource{ShortNames: []string{"sts"}, Categories: []string{"all"}, Strategy: statefulSetStrategy,
			Subresources: statusAndScale, Scale: statefulSetScale, Printer: statefulSetPrinter})
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

var statefulSetStrategy = kindStrategy(kindRules[*appsv1.StatefulSet]{
	defaults: defaultStatefulSet, validate: validateStatefulSet, validateUpdate: validateStatefulSetUpdate,
})

var statefulSetPrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn, column("Ready", "string", "Number of the pod with ready state", 0),
		rest.AgeColumn, containersColumn, imagesColumn,
	},
	func(ss *appsv1.StatefulSet, now time.Time) metav1.TableRow {
		containers, images := containersAndImages(&ss.Spec.Template.Spec)
		return metav1.TableRow{Cells: []any{
			ss.Name, fmt.Sprintf("%d/%d", ss.Status.ReadyReplicas, replicasOf(ss.Spec.Replicas)),
			age(ss.CreationTimestamp.Time, now), containers, images,
		}}
	},
)

// statefulSetScale is the StatefulSets' scale subresource.
var statefulSetScale = replicaScale(func(o *appsv1.StatefulSet) (**int32, int32, string) {
	return &o.Spec.Replicas, o.Status.Replicas, labelSelectorString(o.Spec.Selector)
})
