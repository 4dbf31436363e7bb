package kinds

// What a Service takes from the allocators, and gives back: a ClusterIP
// from --service-cluster-ip-range (unless it is headless or an
// ExternalName), a NodePort per port for NodePort and LoadBalancer
// Services from --service-node-port-range, and a health-check NodePort for
// a LoadBalancer with the Local traffic policy. The Services' write hooks
// (rest.Strategy.BeginWrite and AfterDelete) allocate after validation
// and before the etcd write, undo it if the write fails, and release a
// deleted Service's addresses after the delete, as upstream's Service
// storage does. The ranges are kept in the etcd of the Store that calls
// the hooks (package rangealloc).

import (
	"context"
	"errors"
	"fmt"
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rangealloc"
	"minicp/registry/rest"
	"net"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Allocators are the address ranges of one stack, kept in its etcd.
type Allocators struct {
	IPs   *rangealloc.IPs
	Ports *rangealloc.Ports
}

// allocation records what one write took, to undo it.
type allocation struct {
	a     *Allocators
	ips   []net.IP
	ports []int32
}

// undo releases everything the write took (its etcd write failed).
func (al *allocation) undo(ctx context.Context) {
	for _, ip := range al.ips {
		_ = al.a.IPs.Release(ctx, ip)
	}
	for _, p := range al.ports {
		_ = al.a.Ports.Release(ctx, p)
	}
}

// allocationError turns an allocator's refusal into upstream's answer: a
// taken or out-of-range value is the client's mistake (422 on the field),
// a full range or an etcd failure is the server's (500).
func allocationError(svc *corev1.Service, path *field.Path, value any, what string, rangeText string, err error) error {
	switch {
	case errors.Is(err, rangealloc.ErrAllocated):
		return apierrors.NewInvalid(serviceGroupKind, svc.Name, field.ErrorList{field.Invalid(path, value,
			fmt.Sprintf("failed to allocate %s %v: provided %s is already allocated", what, value, what))})
	case errors.Is(err, rangealloc.ErrNotInRange):
		return apierrors.NewInvalid(serviceGroupKind, svc.Name, field.ErrorList{field.Invalid(path, value,
			fmt.Sprintf("failed to allocate %s %v: provided %s is not in the valid range. The range of valid %ss is %s", what, value, what, what, rangeText))})
	case errors.Is(err, rangealloc.ErrFull):
		return apierrors.NewInternalError(fmt.Errorf("failed to allocate a %s: range %s is full", what, rangeText))
	}
	return registry.StorageError(err)
}

var serviceGroupKind = corev1.SchemeGroupVersion.WithKind("Service").GroupKind()

// allocateServiceIP gives svc its ClusterIP: the one it asks for, or the
// next free one; a headless Service gets none.
func (al *allocation) allocateServiceIP(ctx context.Context, svc *corev1.Service) error {
	spec := &svc.Spec
	if spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if spec.ClusterIP == "" && len(spec.ClusterIPs) > 0 {
		spec.ClusterIP = spec.ClusterIPs[0]
	}
	if err := al.setIPFamilies(svc); err != nil {
		return err
	}
	switch spec.ClusterIP {
	case corev1.ClusterIPNone:
		spec.ClusterIPs = []string{corev1.ClusterIPNone}
		return nil
	case "":
		ip, err := al.a.IPs.AllocateNext(ctx)
		if err != nil {
			return allocationError(svc, field.NewPath("spec", "clusterIPs").Index(0), "", "IP", al.a.IPs.Range().String(), err)
		}
		al.ips = append(al.ips, ip)
		spec.ClusterIP = ip.String()
	default:
		ip := net.ParseIP(spec.ClusterIP)
		if err := al.a.IPs.Allocate(ctx, ip); err != nil {
			return allocationError(svc, field.NewPath("spec", "clusterIPs").Index(0), spec.ClusterIP, "IP", al.a.IPs.Range().String(), err)
		}
		al.ips = append(al.ips, ip)
	}
	spec.ClusterIPs = []string{spec.ClusterIP}
	return nil
}

// setIPFamilies fills and checks the IP family fields against what the
// cluster serves: one range, IPv4 or IPv6 (--service-cluster-ip-range), so
// one family. As upstream on a single-stack cluster: the policy defaults
// to SingleStack, PreferDualStack is kept (and gets one family),
// RequireDualStack and a family of the other kind are refused (422).
func (al *allocation) setIPFamilies(svc *corev1.Service) error {
	spec, path := &svc.Spec, field.NewPath("spec")
	family := corev1.IPv4Protocol
	if al.a.IPs.Range().IPv6() {
		family = corev1.IPv6Protocol
	}
	policy := corev1.IPFamilyPolicySingleStack
	if spec.IPFamilyPolicy != nil {
		policy = *spec.IPFamilyPolicy
	}
	var errs field.ErrorList
	switch policy {
	case corev1.IPFamilyPolicySingleStack, corev1.IPFamilyPolicyPreferDualStack:
	case corev1.IPFamilyPolicyRequireDualStack:
		errs = append(errs, field.Invalid(path.Child("ipFamilyPolicy"), policy, "this cluster is not configured for dual-stack services"))
	default:
		errs = append(errs, field.NotSupported(path.Child("ipFamilyPolicy"), policy, []corev1.IPFamilyPolicy{corev1.IPFamilyPolicySingleStack,
			corev1.IPFamilyPolicyPreferDualStack, corev1.IPFamilyPolicyRequireDualStack}))
	}
	for i, f := range spec.IPFamilies {
		switch {
		case f != corev1.IPv4Protocol && f != corev1.IPv6Protocol:
			errs = append(errs, field.NotSupported(path.Child("ipFamilies").Index(i), f, []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}))
		case f != family:
			errs = append(errs, field.Invalid(path.Child("ipFamilies").Index(i), f, "not configured on this cluster"))
		}
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(serviceGroupKind, svc.Name, errs)
	}
	spec.IPFamilies, spec.IPFamilyPolicy = []corev1.IPFamily{family}, &policy
	return nil
}

// allocateNodePorts gives each port without a NodePort the next free one
// and reserves those asked for; taken is the set of ports the Service
// already holds (an update keeps them).
func (al *allocation) allocateNodePorts(ctx context.Context, svc *corev1.Service, taken map[int32]bool) error {
	if !needsNodePorts(svc) {
		return nil
	}
	ports := al.a.Ports
	reserve := func(p *int32, path *field.Path) error {
		switch {
		case taken[*p]:
			return nil
		case *p == 0:
			next, err := ports.AllocateNext(ctx)
			if err != nil {
				return allocationError(svc, path, 0, "port", ports.Range().String(), err)
			}
			*p = next
		default:
			if err := ports.Allocate(ctx, *p); err != nil {
				return allocationError(svc, path, *p, "port", ports.Range().String(), err)
			}
		}
		al.ports = append(al.ports, *p)
		taken[*p] = true
		return nil
	}
	for i := range svc.Spec.Ports {
		if err := reserve(&svc.Spec.Ports[i].NodePort, field.NewPath("spec", "ports").Index(i).Child("nodePort")); err != nil {
			return err
		}
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal {
		return reserve(&svc.Spec.HealthCheckNodePort, field.NewPath("spec", "healthCheckNodePort"))
	}
	return nil
}

// nodePortsOf lists the NodePorts a Service holds.
func nodePortsOf(svc *corev1.Service) map[int32]bool {
	held := map[int32]bool{}
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			held[p.NodePort] = true
		}
	}
	if svc.Spec.HealthCheckNodePort != 0 {
		held[svc.Spec.HealthCheckNodePort] = true
	}
	return held
}

// allocateService takes what a new Service needs. On error nothing stays
// allocated.
func (a *Allocators) allocateService(ctx context.Context, svc *corev1.Service) (*allocation, error) {
	al := &allocation{a: a}
	err := al.allocateServiceIP(ctx, svc)
	if err == nil {
		err = al.allocateNodePorts(ctx, svc, map[int32]bool{})
	}
	if err != nil {
		al.undo(ctx)
		return nil, err
	}
	return al, nil
}

// updateService takes what an updated Service needs beyond what old held
// (a NodePort for a new port, a ClusterIP for a Service that stops being an
// ExternalName), and returns what to release once the update is written
// (what old held and svc no longer does).
func (a *Allocators) updateService(ctx context.Context, svc, old *corev1.Service) (*allocation, *allocation, error) {
	al, freed := &allocation{a: a}, &allocation{a: a}
	if !needsNodePorts(svc) && needsNodePorts(old) {
		// A Service leaving NodePort or LoadBalancer drops its NodePorts.
		for i := range svc.Spec.Ports {
			svc.Spec.Ports[i].NodePort = 0
		}
		svc.Spec.HealthCheckNodePort = 0
	}
	var err error
	switch {
	case old.Spec.Type == corev1.ServiceTypeExternalName && svc.Spec.Type != corev1.ServiceTypeExternalName:
		err = al.allocateServiceIP(ctx, svc)
	case svc.Spec.Type != corev1.ServiceTypeExternalName:
		err = al.setIPFamilies(svc) // a policy or family changed by the update is checked too
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName && old.Spec.ClusterIP != "" && old.Spec.ClusterIP != corev1.ClusterIPNone {
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs, svc.Spec.IPFamilies, svc.Spec.IPFamilyPolicy = "", nil, nil, nil
		freed.ips = append(freed.ips, net.ParseIP(old.Spec.ClusterIP))
	}
	if err == nil {
		err = al.allocateNodePorts(ctx, svc, nodePortsOf(old))
	}
	if err != nil {
		al.undo(ctx)
		return nil, nil, err
	}
	kept := nodePortsOf(svc)
	for p := range nodePortsOf(old) {
		if !kept[p] {
			freed.ports = append(freed.ports, p)
		}
	}
	return al, freed, nil
}

// releaseService gives back everything a deleted Service held.
func (a *Allocators) releaseService(ctx context.Context, svc *corev1.Service) {
	al := &allocation{a: a}
	if ip := net.ParseIP(svc.Spec.ClusterIP); ip != nil {
		al.ips = append(al.ips, ip)
	}
	for p := range nodePortsOf(svc) {
		al.ports = append(al.ports, p)
	}
	al.undo(ctx)
}

const DefaultServiceClusterIPRange = "10.0.0.0/24"

const DefaultServiceNodePortRange = "30000-32767"

// serviceRanges are the parsed ranges of a Config, which the Services'
// write hooks allocate from.
type serviceRanges struct {
	ips   *rangealloc.IPRange
	ports *rangealloc.PortRange
}

// parseServiceRanges parses the ranges of c.
func parseServiceRanges(c Config) (serviceRanges, error) {
	ips, err := rangealloc.ParseIPRange(c.ServiceClusterIPRange)
	if err != nil {
		return serviceRanges{}, err
	}
	ports, err := rangealloc.ParsePortRange(c.ServiceNodePortRange)
	if err != nil {
		return serviceRanges{}, err
	}
	return serviceRanges{ips: ips, ports: ports}, nil
}

// allocators keeps the ranges in the etcd of the Store that runs the hook,
// encoding their RangeAllocation objects as that Store encodes everything
// (protobuf or JSON).
func (r serviceRanges) allocators(env rest.HookEnv) (*Allocators, error) {
	info, ok := runtime.SerializerInfoForMediaType(registry.Codecs.SupportedMediaTypes(), env.StorageMediaType)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("no serializer for %q", env.StorageMediaType))
	}
	codec := registry.Codecs.CodecForVersions(info.Serializer, info.Serializer, apigroups.CoreV1, apigroups.CoreV1)
	return &Allocators{IPs: rangealloc.NewIPs(env.KV, codec, r.ips), Ports: rangealloc.NewPorts(env.KV, codec, r.ports)}, nil
}

// beginServiceWrite is the Services' Strategy.BeginWrite: a new Service
// takes its ClusterIP and NodePorts, an updated one what it needs beyond
// what it held.
func (r serviceRanges) beginServiceWrite(ctx context.Context, env rest.HookEnv, obj, old runtime.Object) (func(context.Context, bool), error) {
	a, err := r.allocators(env)
	if err != nil {
		return nil, err
	}
	svc := obj.(*corev1.Service)
	if old == nil {
		al, err := a.allocateService(ctx, svc)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, written bool) {
			if !written {
				al.undo(ctx)
			}
		}, nil
	}
	al, freed, err := a.updateService(ctx, svc, old.(*corev1.Service))
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, written bool) {
		if written {
			freed.undo(ctx)
		} else {
			al.undo(ctx)
		}
	}, nil
}

// afterServiceDelete is the Services' Strategy.AfterDelete.
func (r serviceRanges) afterServiceDelete(ctx context.Context, env rest.HookEnv, obj runtime.Object) {
	if a, err := r.allocators(env); err == nil {
		a.releaseService(ctx, obj.(*corev1.Service))
	}
}
