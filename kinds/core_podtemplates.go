package kinds

// PodTemplates: a pod template defaulted and checked like a workload's.

import (
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// podTemplatesEntry describes the podtemplates resource (core/v1 PodTemplate).
func podTemplatesEntry() *registry.Resource {
	return entry(apigroups.CoreV1, "podtemplates", "PodTemplate", true, "/registry/podtemplates",
		func() runtime.Object { return &corev1.PodTemplate{} }, func() runtime.Object { return &corev1.PodTemplateList{} },
		&registry.Resource{Strategy: podTemplateStrategy, Printer: podTemplatePrinter})
}

var podTemplateStrategy = kindStrategy(kindRules[*corev1.PodTemplate]{
	defaults: func(pt *corev1.PodTemplate) { defaultPodTemplate(&pt.Template) },
	validate: func(pt *corev1.PodTemplate) field.ErrorList {
		return validateTemplate(&pt.Template, nil, field.NewPath("template"))
	},
})

var podTemplatePrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		column("Containers", "string", "Names of each container in the template.", 0),
		column("Images", "string", "Images referenced by each container in the template.", 0),
		column("Pod Labels", "string", "The labels for the pod template.", 0),
	},
	func(pt *corev1.PodTemplate, now time.Time) metav1.TableRow {
		containers, images := containersAndImages(&pt.Template.Spec)
		return metav1.TableRow{Cells: []any{pt.Name, containers, images, orNone(labels.FormatLabels(pt.Template.Labels))}}
	},
)
