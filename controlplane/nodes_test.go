package controlplane

import (
	"strings"
	"testing"
)

// Simulated nodes take addresses from lease.NodeAddressRange; a Service
// range overlapping it is refused at start, and only when nodes run.
func TestAServiceRangeOverlappingTheSimulatedNodesIsRefused(t *testing.T) {
	c := NewConfig()
	c.Nodes.Simulated = 3
	c.ServiceClusterIPRange = "172.16.0.0/24"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "overlaps the simulated nodes' addresses") {
		t.Fatalf("Validate = %v, want the overlap refused", err)
	}
	c.Nodes.Simulated = 0
	if err := c.Validate(); err != nil && strings.Contains(err.Error(), "overlaps") {
		t.Fatalf("without simulated nodes: %v", err)
	}
}
