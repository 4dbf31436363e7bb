package kinds

import (
	"errors"
)

// Config is what the built-in kinds are configured with: the ranges a
// Service's write hooks allocate from (upstream's
// --service-cluster-ip-range and --service-node-port-range). NewConfig
// returns the defaults.
type Config struct {
	// ServiceClusterIPRange is the CIDR (IPv4 or IPv6) Services'
	// ClusterIPs come from.
	ServiceClusterIPRange string
	// ServiceNodePortRange is the ports NodePorts come from, <low>-<high>.
	ServiceNodePortRange string
}

// NewConfig returns upstream's default ranges.
func NewConfig() Config {
	return Config{ServiceClusterIPRange: DefaultServiceClusterIPRange, ServiceNodePortRange: DefaultServiceNodePortRange}
}

// Validate checks that both ranges parse.
func (c Config) Validate() error {
	_, err := parseServiceRanges(c)
	return errors.Join(err)
}
