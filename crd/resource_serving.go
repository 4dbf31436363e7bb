package crd

// Serving follows the stored CRDs and keeps the stack's resource table in
// step: a CRD whose Established condition is True has its served versions
// in the table (ServedResources); any change of what they are built from
// (spec, accepted names) replaces them in one swap; a CRD that leaves
// etcd takes them out. It reads CRDs from inside the stack (the watch
// cache), as upstream's CRD handler does, not through the API: serving is
// the apiserver's business; the conditions it waits for are set by the CRD
// controller (package controllers/crd), a client.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"minicp/registry"
)

// DefinitionsResource is the group, version and plural of CRDs.
var DefinitionsResource = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

// Serving keeps a table's custom resources in step with the stored CRDs.
type Serving struct {
	store registry.Interface
	table *registry.Table
	defs  *registry.Resource
	log   *slog.Logger
	// served is what each CRD has in the table now; only Run's goroutine
	// touches it.
	served map[string]served
	// synced is closed (by Run, once) when the first list of CRDs has been
	// applied to the table.
	synced     chan struct{}
	syncedOnce sync.Once
}

// served is one CRD's resources in the table and what they were built from.
type served struct {
	resources []*registry.Resource
	source    string // JSON of spec and accepted names
	// terminating is the CRD's Terminating condition, read by the
	// resources' CreateGate; Run's goroutine sets it.
	terminating *atomic.Bool
}

// refuseCreates is the CreateGate of a CRD's resources: while the CRD is
// being deleted, creates are 405, as upstream answers them.
func refuseCreates(gr schema.GroupResource, terminating *atomic.Bool) func() error {
	return func() error {
		if !terminating.Load() {
			return nil
		}
		err := apierrors.NewMethodNotSupported(gr, "create")
		err.ErrStatus.Message = "create not allowed while custom resource definition is terminating; wait until the CRD is gone and create it again"
		return err
	}
}

// NewServing returns a Serving of table's custom resources, reading CRDs
// from store.
func NewServing(store registry.Interface, table *registry.Table, log *slog.Logger) (*Serving, error) {
	defs, ok := table.Lookup(DefinitionsResource)
	if !ok {
		return nil, errors.New("crd: the table does not serve customresourcedefinitions")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Serving{store: store, table: table, defs: defs, log: log, served: map[string]served{}, synced: make(chan struct{})}, nil
}

// Synced is closed once the CRDs stored when Run started are served.
func (s *Serving) Synced() <-chan struct{} { return s.synced }

// Run lists the CRDs, serves the established ones, then follows their
// changes with a watch, listing again whenever the watch ends, until ctx
// ends. It returns then; the resources it added stay in the table.
func (s *Serving) Run(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := s.listAndWatch(ctx)
		if ctx.Err() != nil {
			return
		}
		s.log.Info("custom resources: re-listing CRDs", "reason", err)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// listAndWatch syncs every CRD of a list, then each change of a watch from
// the list's revision; it returns why the watch ended.
func (s *Serving) listAndWatch(ctx context.Context) error {
	list, err := s.store.List(ctx, s.defs, "", registry.ListOptions{})
	if err != nil {
		return err
	}
	crds := list.(*apiextensionsv1.CustomResourceDefinitionList)
	present := map[string]bool{}
	for i := range crds.Items {
		present[crds.Items[i].Name] = true
		s.sync(&crds.Items[i])
	}
	for name := range s.served {
		if !present[name] {
			s.withdraw(name)
		}
	}
	s.syncedOnce.Do(func() { close(s.synced) })
	w, err := s.store.Watch(ctx, s.defs, "", registry.ListOptions{ResourceVersion: crds.ResourceVersion})
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return errors.New("the CRD watch ended")
			}
			if err := s.handle(ev); err != nil {
				return err
			}
		}
	}
}

// handle applies one watch event.
func (s *Serving) handle(ev watch.Event) error {
	obj := ev.Object
	if co, ok := obj.(runtime.CacheableObject); ok {
		obj = co.GetObject()
	}
	switch ev.Type {
	case watch.Error:
		return fmt.Errorf("the CRD watch failed: %v", obj)
	case watch.Bookmark:
		return nil
	case watch.Deleted:
		if m, err := meta.Accessor(obj); err == nil {
			s.withdraw(m.GetName())
		}
		return nil
	}
	if crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok {
		s.sync(crd)
	}
	return nil
}

// sync makes the table serve what crd says: its served versions once it
// is Established, nothing before.
func (s *Serving) sync(crd *apiextensionsv1.CustomResourceDefinition) {
	if !apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
		s.withdraw(crd.Name)
		return
	}
	source, err := json.Marshal([]any{crd.Spec, crd.Status.AcceptedNames})
	if err != nil {
		s.log.Error("custom resources: cannot read CRD", "crd", crd.Name, "err", err)
		return
	}
	old := s.served[crd.Name]
	terminating := apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Terminating)
	if old.source == string(source) {
		old.terminating.Store(terminating)
		return
	}
	state := &atomic.Bool{}
	state.Store(terminating)
	resources, err := ServedResources(crd)
	for _, res := range resources {
		res.CreateGate = refuseCreates(res.GroupResource(), state)
	}
	if err == nil {
		err = s.table.Change(old.resources, resources)
	}
	if err != nil {
		s.log.Error("custom resources: cannot serve CRD", "crd", crd.Name, "err", err)
		return
	}
	s.served[crd.Name] = served{resources: resources, source: string(source), terminating: state}
	s.log.Info("custom resources: serving", "crd", crd.Name, "versions", len(resources))
}

// withdraw takes a CRD's resources out of the table.
func (s *Serving) withdraw(name string) {
	old, ok := s.served[name]
	if !ok {
		return
	}
	if err := s.table.Change(old.resources, nil); err != nil {
		s.log.Error("custom resources: cannot withdraw CRD", "crd", name, "err", err)
		return
	}
	delete(s.served, name)
	s.log.Info("custom resources: no longer serving", "crd", name)
}
