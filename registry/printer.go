package registry

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

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

// PrinterOf returns r's Printer, DefaultPrinter when it has none.
func (r *Resource) PrinterOf() *Printer {
	if r.Printer != nil {
		return r.Printer
	}
	return DefaultPrinter
}

// NameColumn and AgeColumn are the columns most printers start with.
var (
	NameColumn = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]}
	AgeColumn  = metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]}
)
