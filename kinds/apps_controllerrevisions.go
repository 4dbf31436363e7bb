package kinds

// ControllerRevisions (apps/v1): immutable snapshots a StatefulSet or a
// DaemonSet keeps of its template.

import (
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// controllerRevisionsEntry describes the controllerrevisions resource (apps/v1 ControllerRevision).
func controllerRevisionsEntry() *registry.Resource {
	return entry(apigroups.AppsV1, "controllerrevisions", "ControllerRevision", true, "/registry/controllerrevisions",
		func() runtime.Object { return &appsv1.ControllerRevision{} }, func() runtime.Object { return &appsv1.ControllerRevisionList{} },
		&registry.Resource{Strategy: controllerRevisionStrategy, Printer: controllerRevisionPrinter})
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

var controllerRevisionStrategy = kindStrategy(kindRules[*appsv1.ControllerRevision]{
	validate: validateControllerRevision, validateUpdate: validateControllerRevisionUpdate,
})

var controllerRevisionPrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		column("Controller", "string", "Controller of the object", 0),
		column("Revision", "integer", appsv1.ControllerRevision{}.SwaggerDoc()["revision"], 0),
		rest.AgeColumn,
	},
	func(cr *appsv1.ControllerRevision, now time.Time) metav1.TableRow {
		controller := "<none>"
		if ref := metav1.GetControllerOf(cr); ref != nil {
			controller = strings.ToLower(ref.Kind) + "." + strings.SplitN(ref.APIVersion, "/", 2)[0] + "/" + ref.Name
			if !strings.Contains(ref.APIVersion, "/") {
				controller = strings.ToLower(ref.Kind) + "/" + ref.Name
			}
		}
		return metav1.TableRow{Cells: []any{cr.Name, controller, cr.Revision, age(cr.CreationTimestamp.Time, now)}}
	},
)
