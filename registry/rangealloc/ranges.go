package rangealloc

import (
	"fmt"
	"math/big"
	"net"
	"strconv"
	"strings"
)

// IPRange is the usable addresses of a CIDR: offset 0 is the address after
// the network's, and an IPv4 broadcast address is left out.
type IPRange struct {
	cidr *net.IPNet
	base *big.Int // the address at offset 0
	size int
}

// maxIPv6Values bounds an IPv6 range's bitmap, as upstream does.
const maxIPv6Values = 65536

// ParseIPRange parses a --service-cluster-ip-range value ("10.0.0.0/24").
func ParseIPRange(cidr string) (*IPRange, error) {
	_, ipnet, err := net.ParseCIDR(cidr)
	if err != nil {
		return nil, fmt.Errorf("service cluster IP range %q: %w", cidr, err)
	}
	ones, bits := ipnet.Mask.Size()
	// Upstream's limits: a /12 or longer for IPv4, a /108 for IPv6.
	if bits-ones > 20 {
		return nil, fmt.Errorf("service cluster IP range %q is too large: the mask must be at least /%d", cidr, bits-20)
	}
	total := int64(1) << (bits - ones)
	size := total - 1 // not the network address
	if ipnet.IP.To4() != nil {
		size-- // not the broadcast address
	} else if size > maxIPv6Values {
		size = maxIPv6Values
	}
	if size < 1 {
		return nil, fmt.Errorf("service cluster IP range %q has no usable address", cidr)
	}
	base := new(big.Int).SetBytes(ipnet.IP)
	base.Add(base, big.NewInt(1))
	return &IPRange{cidr: ipnet, base: base, size: int(size)}, nil
}

// String is the range as stored ("10.0.0.0/24").
func (r *IPRange) String() string { return r.cidr.String() }

// Size is the number of usable addresses.
func (r *IPRange) Size() int { return r.size }

// IPv6 reports the range's family.
func (r *IPRange) IPv6() bool { return r.cidr.IP.To4() == nil }

// IP returns the address at offset.
func (r *IPRange) IP(offset int) net.IP {
	v := new(big.Int).Add(r.base, big.NewInt(int64(offset)))
	b := v.Bytes()
	ip := make(net.IP, len(r.cidr.IP))
	copy(ip[len(ip)-len(b):], b)
	return ip
}

// Offset returns ip's offset, false if ip is not a usable address of the range.
func (r *IPRange) Offset(ip net.IP) (int, bool) {
	if ip4 := ip.To4(); ip4 != nil && !r.IPv6() {
		ip = ip4
	}
	if !r.cidr.Contains(ip) {
		return 0, false
	}
	off := new(big.Int).Sub(new(big.Int).SetBytes(ip), r.base)
	if off.Sign() < 0 || off.Cmp(big.NewInt(int64(r.size))) >= 0 {
		return 0, false
	}
	return int(off.Int64()), true
}

// reservedBand is the lower part of the range kept for addresses asked
// for by number: size/16, at least 16 and at most 256 (none for ranges
// of 16 addresses or fewer), as upstream.
func (r *IPRange) reservedBand() int {
	total := r.size + 2
	if total <= 16 {
		return 0
	}
	return min(max(total/16, 16), 256)
}

// PortRange is the ports [Base, Base+Size).
type PortRange struct {
	Base, Size int
}

// ParsePortRange parses a --service-node-port-range value ("30000-32767",
// or a single port).
func ParsePortRange(s string) (*PortRange, error) {
	lo, hi, found := strings.Cut(strings.TrimSpace(s), "-")
	if !found {
		hi = lo
	}
	low, err1 := strconv.Atoi(lo)
	high, err2 := strconv.Atoi(hi)
	if err1 != nil || err2 != nil || low < 1 || high > 65535 || high < low {
		return nil, fmt.Errorf("service node port range %q: want <low>-<high>, ports between 1 and 65535", s)
	}
	return &PortRange{Base: low, Size: high - low + 1}, nil
}

// String is the range as stored ("30000-32767").
func (r *PortRange) String() string { return fmt.Sprintf("%d-%d", r.Base, r.Base+r.Size-1) }

// reservedBand: size/32, at least 16 and at most 128 ports (none for
// ranges of 16 ports or fewer), as upstream.
func (r *PortRange) reservedBand() int {
	if r.Size <= 16 {
		return 0
	}
	return min(max(r.Size/32, 16), 128)
}
