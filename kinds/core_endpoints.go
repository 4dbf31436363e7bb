package kinds

// Endpoints: their defaults and `kubectl get` columns.

import (
	"fmt"
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// endpointsEntry describes the endpoints resource (core/v1 Endpoints).
func endpointsEntry() *registry.Resource {
	return entry(apigroups.CoreV1, "endpoints", "Endpoints", true, "/registry/services/endpoints",
		func() runtime.Object { return &corev1.Endpoints{} }, func() runtime.Object { return &corev1.EndpointsList{} },
		&registry.Resource{ShortNames: []string{"ep"}, Strategy: endpointsStrategy, Printer: endpointsPrinter})
}

// defaultEndpoints: ports are TCP unless they say otherwise.
func defaultEndpoints(ep *corev1.Endpoints) {
	for i := range ep.Subsets {
		for j := range ep.Subsets[i].Ports {
			if p := &ep.Subsets[i].Ports[j]; p.Protocol == "" {
				p.Protocol = corev1.ProtocolTCP
			}
		}
	}
}

var endpointsStrategy = kindStrategy(kindRules[*corev1.Endpoints]{defaults: defaultEndpoints})

var endpointsPrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn, column("Endpoints", "string", corev1.Endpoints{}.SwaggerDoc()["subsets"], 0), rest.AgeColumn,
	},
	func(ep *corev1.Endpoints, now time.Time) metav1.TableRow {
		var addrs []string
		for _, ss := range ep.Subsets {
			for _, a := range ss.Addresses {
				if len(ss.Ports) == 0 {
					addrs = append(addrs, a.IP)
				}
				for _, p := range ss.Ports {
					addrs = append(addrs, fmt.Sprintf("%s:%d", a.IP, p.Port))
				}
			}
		}
		return metav1.TableRow{Cells: []any{ep.Name, shortList(addrs), age(ep.CreationTimestamp.Time, now)}}
	},
)
