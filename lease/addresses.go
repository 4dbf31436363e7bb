package lease

import (
	"fmt"
	"net/netip"
)

// NodeAddressRange is where simulated nodes take their InternalIPs from,
// node 0 getting 172.16.0.1: a private range apart from minicp's Service
// range (10.0.0.0/24 by default) and from the Service and pod ranges
// clusters usually use (10.96.0.0/12, 10.244.0.0/16), so that no node
// shares an address with a Service or a pod, as on a real cluster, where
// nodes live on the machines' network.
var NodeAddressRange = netip.MustParsePrefix("172.16.0.0/12")

// MaxNodes is how many nodes NodeAddressRange numbers: every address but
// the range's first and last.
const MaxNodes = 1<<(32-12) - 2

// internalIP is node index's address: the index+1-th of NodeAddressRange.
func internalIP(index int) string {
	n := uint32(index + 1)
	base := NodeAddressRange.Addr().As4()
	b := [4]byte{base[0], base[1] | byte(n>>16&0x0f), byte(n >> 8), byte(n)}
	return netip.AddrFrom4(b).String()
}

// CheckServiceRange reports an error when the Service CIDR overlaps the
// simulated nodes' addresses: a node's address would then be a Service's.
func CheckServiceRange(cidr string) error {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return fmt.Errorf("the Service range %q: %w", cidr, err)
	}
	if p.Overlaps(NodeAddressRange) {
		return fmt.Errorf("the Service range %s overlaps the simulated nodes' addresses %s: choose a Service range outside it", cidr, NodeAddressRange)
	}
	return nil
}

// CheckServiceAddress reports an error when a Service's ClusterIP lies in
// the simulated nodes' addresses (a client of a cluster it did not start,
// such as kubelet-sim, sees addresses, not the apiserver's flags).
func CheckServiceAddress(ip string) error {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return nil // headless or unset: no address to collide with
	}
	if NodeAddressRange.Contains(a) {
		return fmt.Errorf("the Service address %s is in the simulated nodes' addresses %s: the apiserver's Service range overlaps them", ip, NodeAddressRange)
	}
	return nil
}
