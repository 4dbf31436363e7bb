package kinds

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"minicp/registry"
	"minicp/registry/rangealloc"
)

func testAllocators(t *testing.T, cidr, ports string) *Allocators {
	t.Helper()
	client := startEtcd(t)
	codec := registry.Codecs.CodecForVersions(protobuf.NewSerializer(registry.Scheme, registry.Scheme), registry.Codecs.UniversalDeserializer(), corev1.SchemeGroupVersion, corev1.SchemeGroupVersion)
	ipRange, err := rangealloc.ParseIPRange(cidr)
	if err != nil {
		t.Fatal(err)
	}
	portRange, err := rangealloc.ParsePortRange(ports)
	if err != nil {
		t.Fatal(err)
	}
	return &Allocators{IPs: rangealloc.NewIPs(client, codec, ipRange), Ports: rangealloc.NewPorts(client, codec, portRange)}
}

func nodePortService(name string, ports ...int32) *corev1.Service {
	svc := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort}}
	svc.Name = name
	for i, p := range ports {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: string(rune('a' + i)), Port: p})
	}
	defaultService(svc)
	return svc
}

func TestServiceAllocationTakesReleasesAndRefusesTakenValues(t *testing.T) {
	a := testAllocators(t, "10.0.0.0/29", "30000-30003") // 6 addresses, 4 ports
	ctx := context.Background()
	first := nodePortService("first", 80)
	if _, err := a.allocateService(ctx, first); err != nil {
		t.Fatal(err)
	}
	spec := first.Spec
	if spec.ClusterIP == "" || !slices.Equal(spec.ClusterIPs, []string{spec.ClusterIP}) || !slices.Equal(spec.IPFamilies, []corev1.IPFamily{corev1.IPv4Protocol}) ||
		*spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack || spec.Ports[0].NodePort < 30000 {
		t.Fatalf("got %+v", spec)
	}
	taken := nodePortService("taken", 80)
	taken.Spec.ClusterIP = spec.ClusterIP
	_, err := a.allocateService(ctx, taken)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("a taken clusterIP: got %v, want 422", err)
	}
	taken.Spec.ClusterIP = ""
	taken.Spec.Ports[0].NodePort = spec.Ports[0].NodePort
	if _, err := a.allocateService(ctx, taken); !apierrors.IsInvalid(err) {
		t.Fatalf("a taken nodePort: got %v, want 422", err)
	}
	// The failed create released the IP it had taken: 5 are left.
	for i := 0; i < 5; i++ {
		svc := &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
		defaultService(svc)
		if _, err := a.allocateService(ctx, svc); err != nil {
			t.Fatalf("address %d of 5: %v", i+1, err)
		}
	}
	full := &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := a.allocateService(ctx, full); !apierrors.IsInternalError(err) {
		t.Fatalf("a full range: got %v, want 500", err)
	}
	a.releaseService(ctx, first)
	again := nodePortService("again", 80, 81, 82, 83)
	if _, err := a.allocateService(ctx, again); err != nil {
		t.Fatalf("after a release, all 4 ports and an address: %v", err)
	}
}

func TestServiceUpdateAllocatesNewPortsAndFreesDroppedOnes(t *testing.T) {
	a := testAllocators(t, "10.0.0.0/24", "30000-30001")
	ctx := context.Background()
	old := nodePortService("svc", 80, 81)
	if _, err := a.allocateService(ctx, old); err != nil {
		t.Fatal(err)
	}
	asClusterIP := old.DeepCopy()
	asClusterIP.Spec.Type = corev1.ServiceTypeClusterIP
	_, freed, err := a.updateService(ctx, asClusterIP, old)
	if err != nil {
		t.Fatal(err)
	}
	if asClusterIP.Spec.Ports[0].NodePort != 0 || len(freed.ports) != 2 {
		t.Fatalf("ClusterIP keeps node ports %v, frees %v", asClusterIP.Spec.Ports, freed.ports)
	}
	freed.undo(ctx)
	other := nodePortService("other", 80, 81)
	if _, err := a.allocateService(ctx, other); err != nil {
		t.Fatalf("the freed ports were not given back: %v", err)
	}
}

// An IPv6 range gives IPv6 ClusterIPs and says so in the family fields; a
// cluster of one range refuses RequireDualStack and the other family, and
// keeps PreferDualStack with its one family, as upstream does.
func TestServiceIPFamiliesFollowTheClustersOneRange(t *testing.T) {
	ctx := context.Background()
	v6 := testAllocators(t, "fd00:10:96::/112", "30000-30003")
	svc := &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	defaultService(svc)
	if _, err := v6.allocateService(ctx, svc); err != nil {
		t.Fatal(err)
	}
	_, v6Net, _ := net.ParseCIDR("fd00:10:96::/112")
	if ip := net.ParseIP(svc.Spec.ClusterIP); ip == nil || ip.To4() != nil || !v6Net.Contains(ip) ||
		!slices.Equal(svc.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv6Protocol}) || *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack {
		t.Fatalf("from an IPv6 range: clusterIP %q, families %v, policy %v", svc.Spec.ClusterIP, svc.Spec.IPFamilies, *svc.Spec.IPFamilyPolicy)
	}
	v4 := testAllocators(t, "10.0.0.0/29", "30000-30003")
	prefer, require := corev1.IPFamilyPolicyPreferDualStack, corev1.IPFamilyPolicyRequireDualStack
	for _, tc := range []struct {
		name     string
		policy   *corev1.IPFamilyPolicy
		families []corev1.IPFamily
		cause    string // "" when accepted
	}{
		{"PreferDualStack", &prefer, nil, ""},
		{"IPv4 asked for", nil, []corev1.IPFamily{corev1.IPv4Protocol}, ""},
		{"RequireDualStack", &require, nil, "spec.ipFamilyPolicy"},
		{"IPv6 on an IPv4 cluster", nil, []corev1.IPFamily{corev1.IPv6Protocol}, "spec.ipFamilies[0]"},
		{"both families", &prefer, []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}, "spec.ipFamilies[1]"},
	} {
		svc := &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}, IPFamilyPolicy: tc.policy, IPFamilies: tc.families}}
		svc.Name = "s"
		defaultService(svc)
		_, err := v4.allocateService(ctx, svc)
		if tc.cause == "" {
			if err != nil || len(svc.Spec.IPFamilies) != 1 || svc.Spec.IPFamilies[0] != corev1.IPv4Protocol || (tc.policy != nil && *svc.Spec.IPFamilyPolicy != *tc.policy) {
				t.Errorf("%s: %v, families %v", tc.name, err, svc.Spec.IPFamilies)
			}
			continue
		}
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.cause) {
			t.Errorf("%s: got %v, want 422 on %s", tc.name, err, tc.cause)
		}
	}
}

// An update may not turn a Service dual-stack on a single-stack cluster.
func TestServiceUpdateChecksIPFamilies(t *testing.T) {
	ctx := context.Background()
	a := testAllocators(t, "10.0.0.0/29", "30000-30003")
	svc := &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	svc.Name = "s"
	defaultService(svc)
	if _, err := a.allocateService(ctx, svc); err != nil {
		t.Fatal(err)
	}
	updated := svc.DeepCopy()
	require := corev1.IPFamilyPolicyRequireDualStack
	updated.Spec.IPFamilyPolicy = &require
	if _, _, err := a.updateService(ctx, updated, svc); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.ipFamilyPolicy") {
		t.Fatalf("RequireDualStack on update: got %v, want 422 on spec.ipFamilyPolicy", err)
	}
	same := svc.DeepCopy()
	if _, _, err := a.updateService(ctx, same, svc); err != nil || !slices.Equal(same.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv4Protocol}) {
		t.Fatalf("an unchanged update: %v, families %v", err, same.Spec.IPFamilies)
	}
}

// The Services' write hooks allocate from the ranges of the Config the
// table was built with, through a Store that knows nothing of Services,
// and give them back when the Service is deleted.
func TestAServiceWrittenThroughTheStoreTakesAndGivesBackFromTheConfiguredRanges(t *testing.T) {
	table, err := Config{ServiceClusterIPRange: "10.96.0.0/28", ServiceNodePortRange: "31000-31010"}.NewTable()
	if err != nil {
		t.Fatal(err)
	}
	s, err := registry.NewStore(startEtcd(t), table, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	services, _ := table.Lookup(corev1.SchemeGroupVersion.WithResource("services"))
	out, err := s.Create(ctx, services, "default", nodePortService("web", 80), registry.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc := out.(*corev1.Service)
	_, cidr, _ := net.ParseCIDR("10.96.0.0/28")
	if ip := net.ParseIP(svc.Spec.ClusterIP); ip == nil || !cidr.Contains(ip) {
		t.Errorf("got ClusterIP %q, want one in %s", svc.Spec.ClusterIP, cidr)
	}
	if p := svc.Spec.Ports[0].NodePort; p < 31000 || p > 31010 {
		t.Errorf("got NodePort %d, want one in 31000-31010", p)
	}
	if _, err := s.Delete(ctx, services, "default", "web", registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	again := nodePortService("again", 80)
	again.Spec.ClusterIP = svc.Spec.ClusterIP
	again.Spec.Ports[0].NodePort = svc.Spec.Ports[0].NodePort
	if _, err := s.Create(ctx, services, "default", again, registry.WriteOptions{}); err != nil {
		t.Errorf("asking for the deleted Service's ClusterIP and NodePort: got %v, want them given back", err)
	}
}
