package controlplane

// The default/kubernetes Service, with its Endpoints and EndpointSlice,
// says where the apiserver is, as upstream's apiserver keeps it: the
// first address of --service-cluster-ip-range, port 443 ("https") in
// front of the apiserver's own address and port. It is reconciled at
// every start: created when missing, rewritten when the apiserver moved
// (another port), left alone otherwise, so a restart on the same address
// writes nothing.

import (
	"context"
	"fmt"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	"minicp/registry"
	"minicp/registry/rangealloc"
)

// kubernetesServiceName is upstream's name, in the default namespace.
const kubernetesServiceName = "kubernetes"

// kubernetesPortName and kubernetesServicePort are upstream's.
const (
	kubernetesPortName    = "https"
	kubernetesServicePort = 443
)

// apiserverEndpoint is the address and port the apiserver listens on.
func (cp *ControlPlane) apiserverEndpoint() (net.IP, int32, error) {
	host, port, err := net.SplitHostPort(cp.listener.Addr().String())
	if err != nil {
		return nil, 0, err
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return nil, 0, err
	}
	return net.ParseIP(host), int32(n), nil
}

// ensureKubernetesService creates or repairs the kubernetes Service, its
// Endpoints and its EndpointSlice.
func (cp *ControlPlane) ensureKubernetesService(ctx context.Context) error {
	ip, port, err := cp.apiserverEndpoint()
	if err != nil {
		return fmt.Errorf("the apiserver's address: %w", err)
	}
	ipRange, err := rangealloc.ParseIPRange(cp.cfg.ServiceClusterIPRange)
	if err != nil {
		return err
	}
	ports := []corev1.ServicePort{{Name: kubernetesPortName, Port: kubernetesServicePort, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(port)}}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: kubernetesServiceName, Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: ipRange.IP(0).String(), Ports: ports},
	}
	if err := cp.ensureObject(ctx, "", "services", svc, func(current runtime.Object) bool {
		return equality.Semantic.DeepEqual(current.(*corev1.Service).Spec.Ports, ports)
	}, func(current runtime.Object) { current.(*corev1.Service).Spec.Ports = ports }); err != nil {
		return err
	}
	subsets := []corev1.EndpointSubset{{
		Addresses: []corev1.EndpointAddress{{IP: ip.String()}},
		Ports:     []corev1.EndpointPort{{Name: kubernetesPortName, Port: port, Protocol: corev1.ProtocolTCP}},
	}}
	ep := &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: kubernetesServiceName, Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{discoveryv1.LabelSkipMirror: "true"}},
		Subsets: subsets,
	}
	if err := cp.ensureObject(ctx, "", "endpoints", ep, func(current runtime.Object) bool {
		return equality.Semantic.DeepEqual(current.(*corev1.Endpoints).Subsets, subsets)
	}, func(current runtime.Object) { current.(*corev1.Endpoints).Subsets = subsets }); err != nil {
		return err
	}
	ready, name, tcp := true, kubernetesPortName, corev1.ProtocolTCP
	endpoints := []discoveryv1.Endpoint{{Addresses: []string{ip.String()}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}}
	slicePorts := []discoveryv1.EndpointPort{{Name: &name, Port: &port, Protocol: &tcp}}
	family := discoveryv1.AddressTypeIPv4
	if ip.To4() == nil {
		family = discoveryv1.AddressTypeIPv6
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: kubernetesServiceName, Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{discoveryv1.LabelServiceName: kubernetesServiceName}},
		AddressType: family, Endpoints: endpoints, Ports: slicePorts,
	}
	return cp.ensureObject(ctx, discoveryv1.GroupName, "endpointslices", slice, func(current runtime.Object) bool {
		s := current.(*discoveryv1.EndpointSlice)
		return equality.Semantic.DeepEqual(s.Endpoints, endpoints) && equality.Semantic.DeepEqual(s.Ports, slicePorts)
	}, func(current runtime.Object) {
		s := current.(*discoveryv1.EndpointSlice)
		s.Endpoints, s.Ports = endpoints, slicePorts
	})
}

// ensureObject creates obj if it is missing, and otherwise rewrites it
// with fix unless upToDate says it is right already.
func (cp *ControlPlane) ensureObject(ctx context.Context, group, resource string, obj runtime.Object,
	upToDate func(runtime.Object) bool, fix func(runtime.Object)) error {
	m := obj.(metav1.Object)
	res, ok := cp.cfg.Resources.LookupGroupResource(schema.GroupResource{Group: group, Resource: resource})
	if !ok {
		return fmt.Errorf("the resource table has no %s", resource)
	}
	current, err := cp.store.Get(ctx, res, m.GetNamespace(), m.GetName(), registry.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = cp.store.Create(ctx, res, m.GetNamespace(), obj, registry.WriteOptions{})
	case err == nil && !upToDate(current):
		_, _, err = cp.store.Update(ctx, res, m.GetNamespace(), m.GetName(), registry.UpdateOptions{},
			func(current runtime.Object) (runtime.Object, error) {
				fix(current)
				return current, nil
			})
	}
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("the %s %s/%s: %w", resource, m.GetNamespace(), m.GetName(), err)
	}
	return nil
}
