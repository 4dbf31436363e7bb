package apiserver

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minicp/registry"
)

// kubectl get does not format objects itself: it asks the server for a
// Table (Accept: application/json;as=Table;g=meta.k8s.io;v=v1) and prints
// the columns it receives. The server therefore decides what "kubectl get
// pods" shows. This file turns objects into Tables; the columns and cells
// of each kind are its descriptor's Printer (registry.Resource.Printer).
//
// As upstream, the server always fills every column, the "wide" ones
// (priority 1) included; kubectl drops them unless -o wide is given.

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
	printer := res.PrinterOf()
	table := &metav1.Table{TypeMeta: tableTypeMeta}
	if !opts.NoHeaders {
		table.ColumnDefinitions = printer.Columns
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
		row, err := printer.Row(item, now)
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
