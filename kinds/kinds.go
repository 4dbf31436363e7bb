package kinds

// The table of built-in kinds: Builtin lists one entry per kind, each
// written in the kind's own file (<group>_<resource>.go) with entry, which
// fills what every kind fills the same way.

import (
	"minicp/registry"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Builtin returns every built-in resource minicp serves, in discovery
// order, with the default Service ranges (NewConfig).
func Builtin() []*registry.Resource {
	resources, err := NewConfig().Builtin()
	if err != nil {
		panic(err) // the defaults parse: a bug this package's tests catch
	}
	return resources
}

// Builtin returns every built-in resource minicp serves, in discovery
// order, whose Services take their addresses from c's ranges.
func (c Config) Builtin() ([]*registry.Resource, error) {
	services, err := parseServiceRanges(c)
	if err != nil {
		return nil, err
	}
	return []*registry.Resource{
		namespacesEntry(), nodesEntry(), podsEntry(), configMapsEntry(), eventsEntry(), leasesEntry(),
		secretsEntry(), servicesEntry(services), endpointsEntry(), serviceAccountsEntry(),
		persistentVolumeClaimsEntry(), persistentVolumesEntry(), podTemplatesEntry(), replicationControllersEntry(),
		resourceQuotasEntry(), limitRangesEntry(),
		deploymentsEntry(), replicaSetsEntry(), statefulSetsEntry(), daemonSetsEntry(), controllerRevisionsEntry(),
		jobsEntry(), cronJobsEntry(), horizontalPodAutoscalersEntry(),
		eventsV1Entry(), rolesEntry(), roleBindingsEntry(), clusterRolesEntry(), clusterRoleBindingsEntry(),
		ingressesEntry(), ingressClassesEntry(), networkPoliciesEntry(), podDisruptionBudgetsEntry(),
		endpointSlicesEntry(), priorityClassesEntry(), storageClassesEntry(), csiDriversEntry(), csiNodesEntry(),
		volumeAttachmentsEntry(), validatingWebhookConfigurationsEntry(), mutatingWebhookConfigurationsEntry(),
		customResourceDefinitionsEntry(),
	}, nil
}

// NewTable returns a registry.Table of Builtin. It panics if the built-in
// entries are inconsistent: that is a bug in this package, caught by its
// tests.
func NewTable() *registry.Table {
	t, err := registry.NewTable(Builtin()...)
	if err != nil {
		panic(err)
	}
	return t
}

// NewTable returns a registry.Table of c's Builtin.
func (c Config) NewTable() (*registry.Table, error) {
	resources, err := c.Builtin()
	if err != nil {
		return nil, err
	}
	return registry.NewTable(resources...)
}

// entry fills what every kind fills the same way: its names (the singular
// is the kind in lower case, the list kind Kind+"List"), scope, etcd
// prefix, empty objects, and the deletecollection verb (upstream serves it
// on every resource but namespaces). r holds the rest.
func entry(gv schema.GroupVersion, plural, kind string, namespaced bool, prefix string,
	newObj, newList func() runtime.Object, r *registry.Resource) *registry.Resource {
	r.GroupVersion, r.Name, r.Kind, r.ListKind = gv, plural, kind, kind+"List"
	r.SingularName = strings.ToLower(kind)
	r.Namespaced, r.Prefix, r.DeleteCollection = namespaced, prefix, true
	r.New, r.NewList = newObj, newList
	return r
}

// withoutDeleteCollection takes the deletecollection verb away.
func withoutDeleteCollection(r *registry.Resource) *registry.Resource {
	r.DeleteCollection = false
	return r
}
