package registry

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// printerOf adapts a row function written for one concrete type into a
// Printer.
func printerOf[T any](columns []metav1.TableColumnDefinition, row func(T, time.Time) metav1.TableRow) *Printer {
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
var DefaultPrinter = printerOf(
	[]metav1.TableColumnDefinition{
		nameColumn,
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

var (
	nameColumn = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]}
	ageColumn  = metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]}
)

// age prints how long ago t was as kubectl does ("5m", "3d4h"), or
// "<unknown>" for the zero time.
func age(t time.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}
