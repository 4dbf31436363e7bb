package kinds

// What the workload kinds share: pod templates defaulted and checked like
// pods, label selectors, replica counts and their columns, and the scale
// subresource. A Scale is a view of its object: its metadata is the
// object's (the same resourceVersion, so a Scale write is guarded like a
// write of the object), spec.replicas is the object's, status the observed
// count and the selector as a string.

import (
	"minicp/registry"
	"minicp/registry/rest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// statusAndScale are the subresources of the four scalable kinds.
var statusAndScale = []string{"status", "scale"}

// replicasField selects workloads by status.replicas, as upstream does
// for ReplicaSets and ReplicationControllers.
func replicasField(replicas int32) fields.Set {
	return fields.Set{"status.replicas": itoa(replicas)}
}

// defaultPodTemplate defaults a template's pod spec as a pod's.
func defaultPodTemplate(t *corev1.PodTemplateSpec) {
	if t != nil {
		defaultPodSpec(&t.Spec)
	}
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

// validateSelectorUnchanged: in apps/v1 a workload's selector is immutable.
func validateSelectorUnchanged(sel, old *metav1.LabelSelector) field.ErrorList {
	return validation.ValidateImmutableField(sel, old, field.NewPath("spec", "selector"))
}

// replicaScale returns the scale rules of a workload kind T, given where
// an object of T keeps spec.replicas, status.replicas and its pods' label
// selector (as a string): each scalable kind says it in its own file.
func replicaScale[T runtime.Object](fields func(T) (spec **int32, status int32, selector string)) *registry.ScaleRules {
	return &registry.ScaleRules{
		Replicas: func(obj runtime.Object) (int32, int32, string) {
			spec, status, selector := fields(obj.(T))
			var replicas int32
			if *spec != nil {
				replicas = **spec
			}
			return replicas, status, selector
		},
		SetReplicas: func(obj runtime.Object, replicas int32) {
			spec, _, _ := fields(obj.(T))
			*spec = &replicas
		},
	}
}

// labelSelectorString is a selector as a Scale's status.selector shows it.
func labelSelectorString(s *metav1.LabelSelector) string {
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return ""
	}
	return sel.String()
}

func replicasOf(p *int32) int64 {
	if p == nil {
		return 0
	}
	return int64(*p)
}

// replicaColumns are Desired, Current and Ready, as for ReplicaSets and
// ReplicationControllers.
var replicaColumns = []metav1.TableColumnDefinition{
	rest.NameColumn,
	column("Desired", "integer", "Number of desired pods", 0),
	column("Current", "integer", "Number of actual replicas", 0),
	column("Ready", "integer", "Number of ready replicas", 0),
	rest.AgeColumn, containersColumn, imagesColumn, selectorColumn,
}
