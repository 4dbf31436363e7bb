package kinds

// EndpointSlices (discovery.k8s.io/v1): their defaults and columns.

import (
	"fmt"
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// endpointSlicesEntry describes the endpointslices resource (discovery.k8s.io/v1 EndpointSlice).
func endpointSlicesEntry() *registry.Resource {
	return entry(apigroups.DiscoveryV1, "endpointslices", "EndpointSlice", true, "/registry/endpointslices",
		func() runtime.Object { return &discoveryv1.EndpointSlice{} }, func() runtime.Object { return &discoveryv1.EndpointSliceList{} },
		&registry.Resource{Strategy: endpointSliceStrategy, Printer: endpointSlicePrinter})
}

// defaultEndpointSlice: ports are TCP and unnamed unless they say otherwise.
func defaultEndpointSlice(es *discoveryv1.EndpointSlice) {
	for i := range es.Ports {
		p := &es.Ports[i]
		if p.Protocol == nil {
			tcp := corev1.ProtocolTCP
			p.Protocol = &tcp
		}
		if p.Name == nil {
			empty := ""
			p.Name = &empty
		}
	}
}

var endpointSliceStrategy = kindStrategy(kindRules[*discoveryv1.EndpointSlice]{defaults: defaultEndpointSlice})

var endpointSlicePrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		column("AddressType", "string", discoveryv1.EndpointSlice{}.SwaggerDoc()["addressType"], 0),
		column("Ports", "string", discoveryv1.EndpointSlice{}.SwaggerDoc()["ports"], 0),
		column("Endpoints", "string", discoveryv1.EndpointSlice{}.SwaggerDoc()["endpoints"], 0),
		rest.AgeColumn,
	},
	func(es *discoveryv1.EndpointSlice, now time.Time) metav1.TableRow {
		var ports, addrs []string
		for _, p := range es.Ports {
			if p.Port != nil {
				ports = append(ports, fmt.Sprint(*p.Port))
			}
		}
		for _, e := range es.Endpoints {
			addrs = append(addrs, e.Addresses...)
		}
		portList := "<unset>"
		if len(ports) > 0 {
			portList = strings.Join(ports, ",")
		}
		return metav1.TableRow{Cells: []any{es.Name, string(es.AddressType), portList, shortList(addrs), age(es.CreationTimestamp.Time, now)}}
	},
)
