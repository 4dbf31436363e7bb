package rest

// Printers: the Table rows `kubectl get` prints, and the helpers a kind's
// printer is built with.

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Printer turns objects into the rows of the Table `kubectl get` prints
// (Accept: application/json;as=Table;g=meta.k8s.io;v=v1).
type Printer struct {
	// Columns are the table's column definitions. As upstream, every
	// column is always filled; kubectl hides Priority 1 columns unless
	// -o wide.
	Columns []metav1.TableColumnDefinition
	// Row returns obj's cells (and conditions), Object left empty; now is
	// the instant ages are computed against.
	Row func(obj runtime.Object, now time.Time) (metav1.TableRow, error)
}

// TypedPrinter adapts a row function written for one concrete type into a
// Printer.
func TypedPrinter[T any](columns []metav1.TableColumnDefinition, row func(T, time.Time) metav1.TableRow) *Printer {
	return &Printer{Columns: columns, Row: func(obj runtime.Object, now time.Time) (metav1.TableRow, error) {
		typed, ok := obj.(T)
		if !ok {
			var want T
			return metav1.TableRow{}, fmt.Errorf("table printer for %T cannot print %T", want, obj)
		}
		return row(typed, now), nil
	}}
}

// DefaultPrinter is upstream's table for resources without their own
// printer: the name and the creation time.
var DefaultPrinter = TypedPrinter(
	[]metav1.TableColumnDefinition{
		NameColumn,
		{Name: "Created At", Type: "date", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	func(obj metav1.Object, _ time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{obj.GetName(), obj.GetCreationTimestamp().UTC().Format(time.RFC3339)}}
	},
)

// NameColumn and AgeColumn are the columns most printers start with.
var (
	NameColumn = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]}
	AgeColumn  = metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]}
)
