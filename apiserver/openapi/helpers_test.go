package openapi

import (
	"slices"
	"testing"

	"minicp/crd"
	"minicp/internal/testsupport"
	"minicp/kinds"
	"minicp/registry"
)

// testResources is the table of every built-in kind.
var testResources = kinds.NewTable()

// servedResourcesOf returns the descriptors of a CRD manifest's served
// versions.
func servedResourcesOf(t *testing.T, manifest string) []*registry.Resource {
	t.Helper()
	resources, err := crd.ServedResources(testsupport.DecodeCRD(t, manifest))
	if err != nil {
		t.Fatal(err)
	}
	return resources
}

// servedGroups lists the table's API groups in discovery order.
func servedGroups() []string {
	var groups []string
	for _, r := range testResources.All() {
		if !slices.Contains(groups, r.GroupVersion.Group) {
			groups = append(groups, r.GroupVersion.Group)
		}
	}
	return groups
}
