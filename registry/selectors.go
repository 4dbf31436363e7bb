package registry

// Label and field selectors are evaluated after decoding, in the Store: etcd
// knows keys and bytes, not labels. Each kind has the selectable fields
// upstream gives it; any other field is a 400, as upstream.

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// predicate decides whether an object belongs to a LIST or WATCH.
type predicate struct {
	res    *Resource
	label  labels.Selector
	field  fields.Selector
	strict bool // true when some selector may reject objects
}

// newPredicate checks that every field the selector names is selectable for
// the resource: `field label not supported: x` otherwise.
func newPredicate(res *Resource, label labels.Selector, field fields.Selector) (*predicate, error) {
	if label == nil {
		label = labels.Everything()
	}
	if field == nil {
		field = fields.Everything()
	}
	supported := selectableFields(res, res.New())
	for _, req := range field.Requirements() {
		if _, ok := supported[req.Field]; !ok {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", req.Field))
		}
	}
	return &predicate{res: res, label: label, field: field, strict: !label.Empty() || !field.Empty()}, nil
}

// empty reports whether the predicate accepts every object (then a list can
// tell how many items remain after a page).
func (p *predicate) empty() bool { return !p.strict }

func (p *predicate) matches(obj runtime.Object) bool {
	if !p.strict {
		return true
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	return p.label.Matches(labels.Set(m.GetLabels())) && p.field.Matches(selectableFields(p.res, obj))
}

// selectChange decides what a watcher selecting with p sees of one change,
// judging the selectors on the old and the new state, as upstream: typ is
// the change (Added, Modified or Deleted), obj its object (for Deleted,
// the last state), prev the state before a modification (nil: unknown,
// treated as not matching; unused for Added and Deleted). It returns the
// event type to send: an object that stops matching is DELETED for the
// watcher, and the caller sends prev (stamped with the change's revision);
// one that starts matching is ADDED. ok is false when the watcher sees
// nothing of the change.
//
// The Store's watch (watch.go) and the watch cache both select with it.
func (p *predicate) selectChange(typ watch.EventType, obj, prev runtime.Object) (_ watch.EventType, ok bool) {
	if !p.strict {
		return typ, true
	}
	matchesNew := p.matches(obj)
	if typ != watch.Modified {
		return typ, matchesNew
	}
	matchesOld := prev != nil && p.matches(prev)
	switch {
	case matchesNew && matchesOld:
		return watch.Modified, true
	case matchesNew:
		return watch.Added, true
	case matchesOld:
		return watch.Deleted, true
	}
	return "", false
}

// MetadataFieldCount is how many fields selectableFields adds to a kind's own:
// a kind's SelectableFields may size its set for them, to spare a growth.
const MetadataFieldCount = 2

// selectableFields returns the fields a field selector may name for obj,
// with obj's values: metadata.name, metadata.namespace for namespaced
// resources, and the resource's own SelectableFields.
func selectableFields(res *Resource, obj runtime.Object) fields.Set {
	set := fields.Set{}
	if res.SelectableFields != nil {
		set = res.SelectableFields(obj)
	}
	if m, err := meta.Accessor(obj); err == nil {
		set["metadata.name"] = m.GetName()
		if res.Namespaced {
			set["metadata.namespace"] = m.GetNamespace()
		}
	}
	return set
}

// Predicate is a LIST or WATCH's label and field selectors, checked against
// the fields upstream makes selectable for the resource. The watch cache
// filters with it so that it selects exactly what the Store selects.
type Predicate struct{ p *predicate }

// NewPredicate validates the selectors (400 `field label not supported: x`
// for a field the kind does not have); nil selectors select everything.
func NewPredicate(res *Resource, label labels.Selector, field fields.Selector) (Predicate, error) {
	p, err := newPredicate(res, label, field)
	return Predicate{p}, err
}

// Matches reports whether obj is selected.
func (p Predicate) Matches(obj runtime.Object) bool { return p.p.matches(obj) }

// SelectChange decides what a watcher selecting with p sees of a change
// from prev to obj (see selectChange): the type of event to send, with
// obj, or with prev when the type is Deleted for a Modified change.
func (p Predicate) SelectChange(typ watch.EventType, obj, prev runtime.Object) (watch.EventType, bool) {
	return p.p.selectChange(typ, obj, prev)
}

// Empty reports whether every object is selected.
func (p Predicate) Empty() bool { return p.p.empty() }

// RequiresExactField returns the value the field selector requires field to
// have, if it requires one ("spec.nodeName=node-1" -> "node-1", true).
func (p Predicate) RequiresExactField(field string) (string, bool) {
	return p.p.field.RequiresExactMatch(field)
}
