package registry

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Table is the set of resources one running stack serves, in discovery
// order. It is built at start (NewTable) and handed to the Store, the watch
// cache and the apiserver: no package keeps a list of resources of its
// own, and two stacks in one process may serve different tables.
//
// The set changes at run time when custom resources come and go (Change):
//
//   - Each state of the table is an immutable snapshot. A writer builds a
//     new snapshot beside the current one (copy on write) and swaps the
//     pointer; readers (every request's Lookup, discovery's All) load the
//     pointer once and never lock. A reader sees the old set or the new
//     one, never a mixture; a request that found a resource keeps its
//     *Resource to the end, even if the resource leaves the table
//     meanwhile (the Store and the cache still serve it, from etcd).
//   - mu serializes writers and guards subscribers. Subscribers are told
//     of every change, in order, after its swap and still under mu, so
//     that the watch cache starts or stops a resource's cache exactly once
//     per change. A subscriber must not call Change (it would deadlock)
//     and must return quickly: it starts goroutines, it does not wait for
//     them.
//   - Between the swap and the subscriber's return, a request may reach a
//     resource the cache does not hold yet (it is then read from etcd) or
//     one whose cache is being stopped (its watches end; clients re-watch
//     and get 404). Both answers are correct, only slower.
//
// A *Resource never changes once it is in a table: to change a resource,
// Change removes the old descriptor and adds a new one in one swap.
type Table struct {
	// cur is the current snapshot; swapped whole by Change, never modified.
	cur atomic.Pointer[tableSnapshot]
	// mu serializes Change and guards subs. Readers never take it.
	mu   sync.Mutex
	subs []TableSubscriber
}

// tableSnapshot is one immutable state of a Table.
type tableSnapshot struct {
	all   []*Resource
	byGVR map[schema.GroupVersionResource]*Resource
	// byGR holds, for a resource served at several versions (custom
	// resources), the first in the table: the preferred version.
	byGR map[schema.GroupResource]*Resource
}

// TableSubscriber is told of every change of a Table (Subscribe).
type TableSubscriber interface {
	// TableChanged is called under the table's writer lock, after the
	// swap: added and removed are the resources that entered and left.
	TableChanged(added, removed []*Resource)
}

// NewTable checks resources and returns them as a Table. It refuses two
// resources with the same group, version and name, a resource without the
// names, prefix or constructors every consumer needs, an index on a field
// that is not selectable, and two resources of different scopes sharing a
// prefix. One group and name may appear at several versions only with one
// prefix (one set of objects served at several versions).
func NewTable(resources ...*Resource) (*Table, error) {
	snap, err := buildSnapshot(resources)
	if err != nil {
		return nil, err
	}
	t := &Table{}
	t.cur.Store(snap)
	return t, nil
}

// buildSnapshot checks resources and indexes them.
func buildSnapshot(resources []*Resource) (*tableSnapshot, error) {
	t := &tableSnapshot{
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
		if _, dup := t.byGVR[r.GroupVersionResource()]; dup {
			errs = append(errs, fmt.Errorf("registry: resource %s is in the table twice", r.GroupVersionResource()))
			continue
		}
		if first, ok := t.byGR[r.GroupResource()]; ok && first.Prefix != r.Prefix {
			errs = append(errs, fmt.Errorf("registry: resource %s is in the table twice (versions %s and %s, prefixes %s and %s)", r.GroupResource(), first.GroupVersion.Version, r.GroupVersion.Version, first.Prefix, r.Prefix))
			continue
		}
		if other, ok := prefixes[r.Prefix]; ok && other.Namespaced != r.Namespaced {
			errs = append(errs, fmt.Errorf("registry: %s and %s share the prefix %s but not their scope", other.GroupResource(), r.GroupResource(), r.Prefix))
		}
		prefixes[r.Prefix] = r
		t.all = append(t.all, r)
		t.byGVR[r.GroupVersionResource()] = r
		if _, ok := t.byGR[r.GroupResource()]; !ok {
			t.byGR[r.GroupResource()] = r
		}
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

// Change removes the resources of remove (by identity) and appends those
// of add, in one swap, then tells every subscriber. The new set is checked
// as NewTable checks one; if it fails, nothing changes.
func (t *Table) Change(remove, add []*Resource) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	gone := make(map[*Resource]bool, len(remove))
	for _, r := range remove {
		gone[r] = true
	}
	old := t.cur.Load()
	next := make([]*Resource, 0, len(old.all)+len(add))
	var removed []*Resource
	for _, r := range old.all {
		if gone[r] {
			removed = append(removed, r)
			continue
		}
		next = append(next, r)
	}
	snap, err := buildSnapshot(append(next, add...))
	if err != nil {
		return err
	}
	if len(removed) == 0 && len(add) == 0 {
		return nil
	}
	t.cur.Store(snap)
	for _, s := range t.subs {
		s.TableChanged(add, removed)
	}
	return nil
}

// Subscribe makes s hear of every later change (TableChanged). It returns
// the resources in the table at the moment s was added: s hears of every
// change after that state, and of none before it.
func (t *Table) Subscribe(s TableSubscriber) []*Resource {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.subs = append(t.subs, s)
	return t.All()
}

// Unsubscribe stops s from hearing of changes: once it returns, s is not
// being told of one and will not be again. A component that subscribed
// unsubscribes when it stops, so that a table that outlives it (one
// process may start and stop many stacks) neither keeps it nor tells it
// of changes. Unsubscribing what is not subscribed does nothing. Like
// Change, it must not be called from TableChanged.
func (t *Table) Unsubscribe(s TableSubscriber) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.subs = slices.DeleteFunc(t.subs, func(sub TableSubscriber) bool { return sub == s })
}

// Subscribers returns how many subscribers hear of the table's changes.
func (t *Table) Subscribers() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.subs)
}

// All returns the resources in discovery order. The slice is the caller's;
// the resources are shared and must not be changed.
func (t *Table) All() []*Resource {
	return append([]*Resource(nil), t.cur.Load().all...)
}

// Contains reports whether res (this very descriptor) is in the table.
func (t *Table) Contains(res *Resource) bool {
	r, ok := t.cur.Load().byGVR[res.GroupVersionResource()]
	return ok && r == res
}

// Lookup finds a resource by group, version and plural name.
func (t *Table) Lookup(gvr schema.GroupVersionResource) (*Resource, bool) {
	r, ok := t.cur.Load().byGVR[gvr]
	return r, ok
}

// LookupGroupResource finds a resource by group and plural name; for one
// served at several versions, the first in the table (the preferred one).
func (t *Table) LookupGroupResource(gr schema.GroupResource) (*Resource, bool) {
	r, ok := t.cur.Load().byGR[gr]
	return r, ok
}

// Parse finds a resource as upstream's flags name one: "pods",
// "leases.coordination.k8s.io", or a resource of a named group by its
// plural alone ("leases") when only one group has it.
func (t *Table) Parse(name string) (*Resource, error) {
	snap := t.cur.Load()
	if r, ok := snap.byGR[schema.ParseGroupResource(name)]; ok {
		return r, nil
	}
	var found *Resource
	for _, r := range snap.all {
		if r.Name != name || (found != nil && found.GroupResource() == r.GroupResource()) {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("resource %q is ambiguous: say %s or %s", name, found.GroupResource(), r.GroupResource())
		}
		found = r
	}
	if found == nil {
		return nil, fmt.Errorf("unknown resource %q: minicp serves %s", name, snap.names())
	}
	return found, nil
}

// names lists the table's resources as "pods, leases.coordination.k8s.io, ...".
func (t *tableSnapshot) names() string {
	names := make([]string, 0, len(t.all))
	for _, r := range t.all {
		if t.byGR[r.GroupResource()] == r {
			names = append(names, r.GroupResource().String())
		}
	}
	return strings.Join(names, ", ")
}

// ForKey returns the resource whose prefix holds the etcd key, or nil.
// When two resources share a prefix, the first in the table is returned.
func (t *Table) ForKey(key string) *Resource {
	for _, r := range t.cur.Load().all {
		if strings.HasPrefix(key, r.Prefix) && (len(key) == len(r.Prefix) || key[len(r.Prefix)] == '/') {
			return r
		}
	}
	return nil
}
