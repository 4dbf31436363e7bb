package kinds

// Deployments (apps/v1): upstream's defaults, validation and columns.

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
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// deploymentsEntry describes the deployments resource (apps/v1 Deployment).
func deploymentsEntry() *registry.Resource {
	return entry(apigroups.AppsV1, "deployments", "Deployment", true, "/registry/deployments",
		func() runtime.Object { return &appsv1.Deployment{} }, func() runtime.Object { return &appsv1.DeploymentList{} },
		&registry.Resource{ShortNames: []string{"deploy"}, Categories: []string{"all"}, Strategy: deploymentStrategy,
			Subresources: statusAndScale, Scale: deploymentScale, Printer: deploymentPrinter})
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

var deploymentStrategy = kindStrategy(kindRules[*appsv1.Deployment]{
	defaults: defaultDeployment, validate: validateDeployment,
	validateUpdate: func(d, old *appsv1.Deployment) field.ErrorList {
		return validateSelectorUnchanged(d.Spec.Selector, old.Spec.Selector)
	},
})

var deploymentPrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		column("Ready", "string", "Number of the pod with ready state", 0),
		column("Up-to-date", "integer", appsv1.DeploymentStatus{}.SwaggerDoc()["updatedReplicas"], 0),
		column("Available", "integer", appsv1.DeploymentStatus{}.SwaggerDoc()["availableReplicas"], 0),
		rest.AgeColumn, containersColumn, imagesColumn, selectorColumn,
	},
	func(d *appsv1.Deployment, now time.Time) metav1.TableRow {
		containers, images := containersAndImages(&d.Spec.Template.Spec)
		return metav1.TableRow{Cells: []any{
			d.Name, fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, replicasOf(d.Spec.Replicas)),
			int64(d.Status.UpdatedReplicas), int64(d.Status.AvailableReplicas), age(d.CreationTimestamp.Time, now),
			containers, images, selectorString(d.Spec.Selector),
		}}
	},
)

// deploymentScale is the Deployments' scale subresource.
var deploymentScale = replicaScale(func(o *appsv1.Deployment) (**int32, int32, string) {
	return &o.Spec.Replicas, o.Status.Replicas, labelSelectorString(o.Spec.Selector)
})
