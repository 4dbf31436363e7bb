package kinds

// PriorityClasses (scheduling.k8s.io/v1).

import (
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// priorityClassesEntry describes the priorityclasses resource (scheduling.k8s.io/v1 PriorityClass).
func priorityClassesEntry() *registry.Resource {
	return entry(apigroups.SchedulingV1, "priorityclasses", "PriorityClass", false, "/registry/priorityclasses",
		func() runtime.Object { return &schedulingv1.PriorityClass{} }, func() runtime.Object { return &schedulingv1.PriorityClassList{} },
		&registry.Resource{ShortNames: []string{"pc"}, Strategy: priorityClassStrategy, Printer: priorityClassPrinter})
}

// defaultPriorityClass: a pod of this class may preempt lower ones.
func defaultPriorityClass(pc *schedulingv1.PriorityClass) {
	if pc.PreemptionPolicy == nil {
		policy := corev1.PreemptLowerPriority
		pc.PreemptionPolicy = &policy
	}
}

var priorityClassStrategy = kindStrategy(kindRules[*schedulingv1.PriorityClass]{defaults: defaultPriorityClass})

var priorityClassPrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		column("Value", "integer", schedulingv1.PriorityClass{}.SwaggerDoc()["value"], 0),
		column("Global-Default", "boolean", schedulingv1.PriorityClass{}.SwaggerDoc()["globalDefault"], 0),
		rest.AgeColumn,
		column("PreemptionPolicy", "string", schedulingv1.PriorityClass{}.SwaggerDoc()["preemptionPolicy"], 0),
	},
	func(pc *schedulingv1.PriorityClass, now time.Time) metav1.TableRow {
		policy := "<unset>"
		if pc.PreemptionPolicy != nil {
			policy = string(*pc.PreemptionPolicy)
		}
		return metav1.TableRow{Cells: []any{pc.Name, int64(pc.Value), pc.GlobalDefault, age(pc.CreationTimestamp.Time, now), policy}}
	},
)
