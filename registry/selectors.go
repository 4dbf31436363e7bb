package registry

// Label and field selectors are evaluated after decoding, in the Store: etcd
// knows keys and bytes, not labels. Each kind has the selectable fields
// upstream gives it; any other field is a 400, as upstream.

import (
	"fmt"
	"strconv"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
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

// selectableFields returns the fields a field selector may name for obj's
// kind, with obj's values (upstream's ToSelectableFields per strategy).
func selectableFields(res *Resource, obj runtime.Object) fields.Set {
	set := fields.Set{}
	if m, err := meta.Accessor(obj); err == nil {
		set["metadata.name"] = m.GetName()
		if res.Namespaced {
			set["metadata.namespace"] = m.GetNamespace()
		}
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		set["spec.nodeName"] = o.Spec.NodeName
		set["spec.restartPolicy"] = string(o.Spec.RestartPolicy)
		set["spec.schedulerName"] = o.Spec.SchedulerName
		set["spec.serviceAccountName"] = o.Spec.ServiceAccountName
		set["spec.hostNetwork"] = strconv.FormatBool(o.Spec.HostNetwork)
		set["status.phase"] = string(o.Status.Phase)
		set["status.podIP"] = o.Status.PodIP
		set["status.nominatedNodeName"] = o.Status.NominatedNodeName
	case *corev1.Node:
		set["spec.unschedulable"] = strconv.FormatBool(o.Spec.Unschedulable)
	case *corev1.Namespace:
		set["status.phase"] = string(o.Status.Phase)
	case *corev1.Event:
		set["involvedObject.kind"] = o.InvolvedObject.Kind
		set["involvedObject.namespace"] = o.InvolvedObject.Namespace
		set["involvedObject.name"] = o.InvolvedObject.Name
		set["involvedObject.uid"] = string(o.InvolvedObject.UID)
		set["involvedObject.apiVersion"] = o.InvolvedObject.APIVersion
		set["involvedObject.resourceVersion"] = o.InvolvedObject.ResourceVersion
		set["involvedObject.fieldPath"] = o.InvolvedObject.FieldPath
		set["reason"] = o.Reason
		set["reportingComponent"] = o.ReportingController
		set["source"] = o.Source.Component
		set["type"] = o.Type
	case *corev1.ConfigMap, *coordinationv1.Lease:
		// metadata fields only
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

// Empty reports whether every object is selected.
func (p Predicate) Empty() bool { return p.p.empty() }

// RequiresExactField returns the value the field selector requires field to
// have, if it requires one ("spec.nodeName=node-1" -> "node-1", true).
func (p Predicate) RequiresExactField(field string) (string, bool) {
	return p.p.field.RequiresExactMatch(field)
}
