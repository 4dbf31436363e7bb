package apiserver

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"minicp/registry"
)

// toTable renders obj, a single object or a list, as the Table kubectl prints.
func toTable(obj runtime.Object, res *registry.Resource, opts metav1.TableOptions) (*metav1.Table, error) {
	return nil, fmt.Errorf("tables not implemented for %s", res.Name)
}
