package crd

// What `kubectl get` shows for a custom resource: the version's
// additionalPrinterColumns (Age alone when it declares none, as upstream),
// each cell read with its JSONPath by apiextensions' own table convertor.

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"minicp/registry/rest"
)

// defaultColumns are upstream's columns for a version that declares none.
var defaultColumns = []apiextensionsv1.CustomResourceColumnDefinition{{
	Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp",
	Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"],
}}

// printerFor builds the Printer of a version's columns.
func printerFor(columns []apiextensionsv1.CustomResourceColumnDefinition) (*rest.Printer, error) {
	if len(columns) == 0 {
		columns = defaultColumns
	}
	convertor, err := tableconvertor.New(columns)
	if err != nil {
		return nil, err
	}
	headers, err := convertor.ConvertToTable(context.Background(), &unstructured.UnstructuredList{}, nil)
	if err != nil {
		return nil, err
	}
	return &rest.Printer{
		Columns: headers.ColumnDefinitions,
		Row: func(obj runtime.Object, _ time.Time) (metav1.TableRow, error) {
			table, err := convertor.ConvertToTable(context.Background(), obj, nil)
			if err != nil {
				return metav1.TableRow{}, err
			}
			if len(table.Rows) != 1 {
				return metav1.TableRow{}, fmt.Errorf("crd: %d table rows for one object", len(table.Rows))
			}
			row := table.Rows[0]
			row.Object = runtime.RawExtension{}
			return row, nil
		},
	}, nil
}
