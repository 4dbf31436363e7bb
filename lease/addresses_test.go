package lease

import (
	"net/netip"
	"testing"
)

func TestSimulatedNodesTakeAddressesOutsideTheServiceRange(t *testing.T) {
	services := netip.MustParsePrefix("10.0.0.0/24")
	seen := map[string]int{}
	for _, index := range []int{0, 1, 254, 255, 256, 65535, 65536, MaxNodes - 1} {
		ip := internalIP(index)
		a, err := netip.ParseAddr(ip)
		if err != nil {
			t.Fatalf("node %d: %q is not an address", index, ip)
		}
		if !NodeAddressRange.Contains(a) || services.Contains(a) {
			t.Errorf("node %d has %s, want it in %s and outside %s", index, ip, NodeAddressRange, services)
		}
		if other, dup := seen[ip]; dup {
			t.Errorf("nodes %d and %d share %s", other, index, ip)
		}
		seen[ip] = index
	}
	if got := internalIP(0); got != "172.16.0.1" {
		t.Errorf("node 0 has %s, want 172.16.0.1", got)
	}
	if got := internalIP(MaxNodes - 1); got != "172.31.255.254" {
		t.Errorf("the last node has %s, want 172.31.255.254", got)
	}
}

func TestAServiceRangeOverlappingTheNodesIsRefused(t *testing.T) {
	for cidr, overlaps := range map[string]bool{
		"10.0.0.0/24": false, "10.96.0.0/12": false, "fd00::/108": false,
		"172.16.0.0/24": true, "172.0.0.0/8": true, "172.31.255.0/24": true,
	} {
		if err := CheckServiceRange(cidr); (err != nil) != overlaps {
			t.Errorf("CheckServiceRange(%s) = %v, want overlap %v", cidr, err, overlaps)
		}
	}
	if err := CheckServiceAddress("172.16.0.1"); err == nil {
		t.Error("a Service at 172.16.0.1, node 0's address, was not reported")
	}
	if err := CheckServiceAddress("10.0.0.1"); err != nil {
		t.Errorf("the default kubernetes Service's address: %v", err)
	}
}
