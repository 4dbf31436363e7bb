package registry

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Table is the immutable set of resources one running stack serves, in
// discovery order. It is built once at start (NewTable) and handed to the
// Store, the watch cache and the apiserver: no package keeps a list of
// resources of its own, and two stacks in one process may serve different
// tables.
type Table struct {
	all   []*Resource
	byGVR map[schema.GroupVersionResource]*Resource
	byGR  map[schema.GroupResource]*Resource
}

// NewTable checks resources and returns them as a Table. It refuses two
// resources with the same group and name, a resource without the names,
// prefix or constructors every consumer needs, an index on a field that is
// not selectable, and two resources of different scopes sharing a prefix.
func NewTable(resources ...*Resource) (*Table, error) {
	t := &Table{
		byGVR: map[schema.GroupVersionResource]*Resource{},
		byGR:  map[schema.GroupResource]*Resource{},
	}
	prefixes := map[string]*Resource{}
	var errs []error
	for _, r := range resources {
		if err := r.check(); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, dup := t.byGR[r.GroupResource()]; dup {
			errs = append(errs, fmt.Errorf("registry: resource %s is in the table twice", r.GroupResource()))
			continue
		}
		if other, ok := prefixes[r.Prefix]; ok && other.Namespaced != r.Namespaced {
			errs = append(errs, fmt.Errorf("registry: %s and %s share the prefix %s but not their scope", other.GroupResource(), r.GroupResource(), r.Prefix))
		}
		prefixes[r.Prefix] = r
		t.all = append(t.all, r)
		t.byGVR[r.GroupVersionResource()] = r
		t.byGR[r.GroupResource()] = r
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return t, nil
}

// check reports what is missing from r.
func (r *Resource) check() error {
	var missing []string
	for field, empty := range map[string]bool{
		"Name": r.Name == "", "SingularName": r.SingularName == "", "Kind": r.Kind == "", "ListKind": r.ListKind == "",
		"GroupVersion.Version": r.GroupVersion.Version == "", "Prefix": r.Prefix == "", "New": r.New == nil, "NewList": r.NewList == nil,
	} {
		if empty {
			missing = append(missing, field)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("registry: resource %s lacks %s", r.GroupResource(), strings.Join(missing, ", "))
	}
	if !strings.HasPrefix(r.Prefix, "/") || strings.HasSuffix(r.Prefix, "/") {
		return fmt.Errorf("registry: resource %s: prefix %q must start with / and not end with one", r.GroupResource(), r.Prefix)
	}
	if len(r.Indexes) > 0 {
		selectable := selectableFields(r, r.New())
		for _, ix := range r.Indexes {
			if _, ok := selectable[ix.Field]; !ok || ix.Value == nil {
				return fmt.Errorf("registry: resource %s: index on %q needs a Value and a selectable field", r.GroupResource(), ix.Field)
			}
		}
	}
	if r.HasSubresource("scale") != (r.Scale != nil) {
		return fmt.Errorf("registry: resource %s: a scale subresource needs ScaleRules, and ScaleRules a scale subresource", r.GroupResource())
	}
	return nil
}

// All returns the resources in discovery order. The slice is the caller's;
// the resources are shared and must not be changed.
func (t *Table) All() []*Resource {
	return append([]*Resource(nil), t.all...)
}

// Lookup finds a resource by group, version and plural name.
func (t *Table) Lookup(gvr schema.GroupVersionResource) (*Resource, bool) {
	r, ok := t.byGVR[gvr]
	return r, ok
}

// LookupGroupResource finds a resource by group and plural name.
func (t *Table) LookupGroupResource(gr schema.GroupResource) (*Resource, bool) {
	r, ok := t.byGR[gr]
	return r, ok
}

// Parse finds a resource as upstream's flags name one: "pods",
// "leases.coordination.k8s.io", or a resource of a named group by its
// plural alone ("leases") when only one group has it.
func (t *Table) Parse(name string) (*Resource, error) {
	if r, ok := t.byGR[schema.ParseGroupResource(name)]; ok {
		return r, nil
	}
	var found *Resource
	for _, r := range t.all {
		if r.Name == name {
			if found != nil {
				return nil, fmt.Errorf("resource %q is ambiguous: say %s or %s", name, found.GroupResource(), r.GroupResource())
			}
			found = r
		}
	}
	if found == nil {
		return nil, fmt.Errorf("unknown resource %q: minicp serves %s", name, t.names())
	}
	return found, nil
}

// names lists the table's resources as "pods, leases.coordination.k8s.io, ...".
func (t *Table) names() string {
	names := make([]string, len(t.all))
	for i, r := range t.all {
		names[i] = r.GroupResource().String()
	}
	return strings.Join(names, ", ")
}

// ForKey returns the resource whose prefix holds the etcd key, or nil.
// When two resources share a prefix, the first in the table is returned.
func (t *Table) ForKey(key string) *Resource {
	for _, r := range t.all {
		if strings.HasPrefix(key, r.Prefix) && (len(key) == len(r.Prefix) || key[len(r.Prefix)] == '/') {
			return r
		}
	}
	return nil
}
