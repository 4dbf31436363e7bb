package apiserver

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"

	"minicp/registry"
)

// kubectl get does not format objects itself: it asks the server for a
// Table (Accept: application/json;as=Table;g=meta.k8s.io;v=v1) and prints
// the columns it receives. The server therefore decides what "kubectl get
// pods" shows. This file turns objects into Tables; table_printers.go
// holds the columns and cells of each kind, after upstream's printers.
//
// As upstream, the server always fills every column, the "wide" ones
// (priority 1) included; kubectl drops them unless -o wide is given.

// tablePrinter knows the columns of one kind and how to fill a row.
type tablePrinter struct {
	columns []metav1.TableColumnDefinition
	// row returns the cells (and conditions) of obj's row, its Object left
	// empty. now is the instant ages are computed against.
	row func(obj runtime.Object, now time.Time) (metav1.TableRow, error)
}

// printerOf adapts a printer written for one concrete type.
func printerOf[T any](columns []metav1.TableColumnDefinition, row func(T, time.Time) metav1.TableRow) tablePrinter {
	return tablePrinter{columns: columns, row: func(obj runtime.Object, now time.Time) (metav1.TableRow, error) {
		typed, ok := obj.(T)
		if !ok {
			var want T
			return metav1.TableRow{}, fmt.Errorf("table printer for %T cannot print %T", want, obj)
		}
		return row(typed, now), nil
	}}
}

var (
	metaV1         = schema.GroupVersion{Group: metav1.GroupName, Version: "v1"}
	tableTypeMeta  = metav1.TypeMeta{Kind: "Table", APIVersion: metaV1.String()}
	partialObjMeta = metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: metaV1.String()}
)

// toTable renders obj, a single object or a list, as the Table kubectl prints.
func toTable(obj runtime.Object, res *registry.Resource, opts metav1.TableOptions) (*metav1.Table, error) {
	return toTableAt(obj, res, opts, time.Now())
}

// toTableAt is toTable with ages computed against now.
func toTableAt(obj runtime.Object, res *registry.Resource, opts metav1.TableOptions, now time.Time) (*metav1.Table, error) {
	printer, ok := tablePrinters[res.GroupVersionKind().GroupKind()]
	if !ok {
		printer = defaultTablePrinter
	}
	table := &metav1.Table{TypeMeta: tableTypeMeta}
	if !opts.NoHeaders {
		table.ColumnDefinitions = printer.columns
	}
	items := []runtime.Object{obj}
	if meta.IsListType(obj) {
		list, err := meta.ListAccessor(obj)
		if err != nil {
			return nil, err
		}
		table.ResourceVersion = list.GetResourceVersion()
		table.Continue = list.GetContinue()
		table.RemainingItemCount = list.GetRemainingItemCount()
		if items, err = meta.ExtractList(obj); err != nil {
			return nil, err
		}
	} else {
		object, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		table.ResourceVersion = object.GetResourceVersion()
	}
	table.Rows = make([]metav1.TableRow, 0, len(items))
	for _, item := range items {
		row, err := printer.row(item, now)
		if err != nil {
			return nil, err
		}
		if row.Object, err = rowObject(item, res, opts.IncludeObject); err != nil {
			return nil, err
		}
		table.Rows = append(table.Rows, row)
	}
	return table, nil
}

// rowObject is what a row carries besides its cells: nothing, the object's
// metadata (the default; kubectl reads namespace and labels from it for -A,
// --show-labels and -L), or the whole object.
func rowObject(item runtime.Object, res *registry.Resource, include metav1.IncludeObjectPolicy) (runtime.RawExtension, error) {
	switch include {
	case metav1.IncludeNone:
		return runtime.RawExtension{}, nil
	case metav1.IncludeObject:
		full := item.DeepCopyObject()
		full.GetObjectKind().SetGroupVersionKind(res.GroupVersionKind())
		return runtime.RawExtension{Object: full}, nil
	case metav1.IncludeMetadata, "":
		object, err := meta.Accessor(item)
		if err != nil {
			return runtime.RawExtension{}, err
		}
		partial := meta.AsPartialObjectMetadata(object)
		partial.TypeMeta = partialObjMeta
		return runtime.RawExtension{Object: partial}, nil
	default:
		return runtime.RawExtension{}, fmt.Errorf("unknown includeObject %q", include)
	}
}

// defaultTablePrinter is upstream's table for resources without their own
// printer: the name and the creation time.
var defaultTablePrinter = printerOf(
	[]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Created At", Type: "date", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	func(obj metav1.Object, _ time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{obj.GetName(), obj.GetCreationTimestamp().UTC().Format(time.RFC3339)}}
	},
)

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
