package admission

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"minicp/registry"
	"minicp/reqtrace"
)

// Operation is what a request does to an object.
type Operation string

// The operations admission sees, named as upstream's.
const (
	Create Operation = "CREATE"
	Update Operation = "UPDATE"
	Delete Operation = "DELETE"
)

// Attributes describe the request being admitted.
type Attributes struct {
	Operation   Operation
	Resource    *registry.Resource
	Subresource string // "", "status" or "finalize"
	Namespace   string // "" for cluster-scoped resources
	// Name is the object's name; for a create with generateName, the
	// prefix it will be generated from.
	Name string
	// Object is the object to be stored (CREATE, UPDATE); nil for DELETE.
	Object runtime.Object
	// OldObject is the stored object an UPDATE replaces; nil otherwise.
	OldObject runtime.Object
	DryRun    bool
}

// Plugin is one step of the admission chain. Admit returns nil
// to let the request go on, or the error to answer it with (an API
// status error; anything else becomes 500 InternalError). It may block,
// and must then honour ctx: the request's deadline is in it.
type Plugin interface {
	Name() string
	Admit(ctx context.Context, a *Attributes) error
}

// Chain runs plugins in order; the first rejection ends it.
type Chain []Plugin

// admit runs the chain for a, timing each plugin into upstream's admission
// metrics and the whole chain into the request's admission phase.
func (chain Chain) Admit(ctx context.Context, metrics Metrics, a *Attributes) error {
	if len(chain) == 0 {
		return nil
	}
	defer reqtrace.From(ctx).Begin(reqtrace.Admission)()
	chainStart := time.Now()
	var err error
	for _, p := range chain {
		start := time.Now()
		err = p.Admit(ctx, a)
		metrics.observePlugin(p.Name(), a.Operation, err != nil, time.Since(start))
		if err != nil {
			break
		}
	}
	metrics.observeStep(a.Operation, err != nil, time.Since(chainStart))
	return err
}

// NewAttributes describes a request on obj (and old, the stored object, for
// updates) for the chain. name and namespace come from the URL; where it
// has none (a create), they are read from the object, and a create with
// generateName is named by its prefix.
func NewAttributes(op Operation, res *registry.Resource, subresource, namespace, name string, obj, old runtime.Object, dryRun bool) *Attributes {
	a := &Attributes{
		Operation: op, Resource: res, Subresource: subresource, Namespace: namespace,
		Name: name, Object: obj, OldObject: old, DryRun: dryRun,
	}
	if m, err := meta.Accessor(obj); err == nil && obj != nil {
		if a.Name == "" {
			a.Name = m.GetName()
		}
		if a.Name == "" {
			a.Name = m.GetGenerateName()
		}
		if a.Namespace == "" && res.Namespaced {
			a.Namespace = m.GetNamespace()
		}
	}
	return a
}
