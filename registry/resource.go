package registry

import (
	"minicp/registry/rest"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Resource is the one description of a REST resource at one group
// version: everything that makes it different from any other resource is
// a field here, for the Store, the watch cache and the apiserver to read
// instead of comparing resource names. A built-in kind is one Resource in
// kinds.Builtin (one file per kind in package kinds) plus, where upstream
// defaults or validates something clients depend on, a rest.Strategy.
//
// A Resource is immutable once it is in a Table: build it, hand it to
// NewTable, and never change it afterwards (every request reads it without
// a lock). The one thing it keeps besides its description is what the
// apiserver derives from it once and reuses on every write, its field
// managers (FieldManager): a cache safe for concurrent use, which goes
// away with the descriptor when a changed custom resource replaces it.
// Build each Resource in place (&Resource{...}) and pass it by pointer:
// a copy would share that cache, and go vet refuses one.
//
// Fields are grouped by who reads them:
//
//   - names and scope: discovery, routing, OpenAPI, error messages;
//   - storage (Prefix, StorageMediaType, TTL): the Store;
//   - behaviour (Strategy, SelectableFields, AllowCreateOnUpdate,
//     DeleteCollection, Subresources, Scale): the Store and the apiserver;
//   - reading (Indexes, WatchCacheSize): the watch cache;
//   - presentation (Printer, Categories, ShortNames): the apiserver;
//   - the control loops (GarbageCollectorIgnored): the controller manager;
//   - server-side apply (TypeConverter): the apiserver's field managers.
//
// The zero value of every optional field is what most resources want.
type Resource struct {
	// GroupVersion is the group and version the resource is served and
	// stored at ("" for the core group). A resource served at several
	// versions (a custom resource's) has one descriptor per version.
	GroupVersion schema.GroupVersion
	// Name is the plural, as in the URL: "pods", "deployments".
	Name string
	// SingularName, Kind and ListKind as discovery shows them:
	// "pod", "Pod", "PodList".
	SingularName string
	Kind         string
	ListKind     string
	// ShortNames are kubectl's abbreviations ("po"); Categories the
	// groups kubectl expands ("all" in `kubectl get all`).
	ShortNames []string
	Categories []string
	// Namespaced is the scope: true for objects that live in a namespace.
	Namespaced bool

	// Prefix is the etcd key prefix without the trailing slash, exactly as
	// upstream: "/registry/pods", "/registry/minions" for nodes,
	// "/registry/services/specs" for services. Keys are
	// Prefix/<namespace>/<name> for namespaced resources and Prefix/<name>
	// otherwise (KeyFor). Two resources may share a prefix only when they
	// are two versions of the same objects (core/v1 and events.k8s.io/v1
	// events), and then they must have the same scope.
	Prefix string
	// StorageMediaType fixes how this resource's objects are encoded in
	// etcd: MediaTypeProtobuf or MediaTypeJSON. Empty: the stack's
	// --storage-media-type (Options.StorageMediaType). Kinds with no
	// protobuf form (custom resources, upstream) say MediaTypeJSON.
	StorageMediaType string
	// TTL is how the resource's keys are bound to etcd leases: TTLNone
	// (plain keys) or TTLEvent (a lease of --event-ttl shared by the writes
	// of a short window, so that etcd deletes the key on its own, as
	// upstream does for events). minicp's Node Lease binding is per
	// object, not per resource: see Options.KeyTTL.
	TTL TTLPolicy
	// StoredAs, when set, is the other kind's shape the objects are stored
	// in (events.k8s.io/v1 Events are stored as core/v1 Events, at the same
	// keys, as upstream): the storage codec converts (stored_form.go).
	StoredAs *StoredForm
	// StorageCodec, when set, is how the objects are encoded in and
	// decoded from etcd, instead of the scheme's codec of
	// StorageMediaType: custom resources are Unstructured objects stored
	// as JSON at their storage version (package crd). Errors it returns
	// that are API Statuses reach the client as they are.
	StorageCodec runtime.Codec
	// TextOnly: the objects are served and accepted as JSON and YAML only,
	// as upstream serves custom resources (a protobuf body is 415, an
	// Accept header naming only protobuf 406). Their objects are
	// runtime.Unstructured and carry their own apiVersion and kind.
	TextOnly bool
	// OpenAPIV3 and OpenAPIV2, when set, return the resource's own OpenAPI
	// documents (its paths and schemas), which the apiserver merges into
	// the document of the group-version (v3) and the single v2 document:
	// custom resources describe themselves from their CRD's schema
	// (package crd). Nil: the apiserver describes the resource from its
	// compiled-in Go types.
	OpenAPIV3 func() (*spec3.OpenAPI, error)
	OpenAPIV2 func() (*spec.Swagger, error)
	// Coerce, when set, shapes an object decoded from a request body (a
	// create, an update, the result of a patch) by the resource's schema:
	// custom resources drop unknown fields and fill defaults (package
	// crd). With unknownFields it returns the paths of the fields it
	// dropped, which the apiserver treats as fieldValidation asks (Strict:
	// 400, Warn: warnings). An error means the body cannot be the
	// resource's object (400).
	Coerce func(obj runtime.Object, unknownFields bool) ([]string, error)

	// Strategy holds the resource's defaulting, validation and update
	// rules (package rest). Nil: metadata-only rules (rest.DefaultStrategy):
	// names are DNS subdomains, and an update may change anything.
	Strategy *rest.Strategy
	// SelectableFields returns the fields a field selector may name for
	// obj beyond metadata.name (and metadata.namespace for namespaced
	// resources), with obj's values, as upstream's GetAttrs/
	// ToSelectableFields do ("spec.nodeName" for pods). Nil: those two
	// only. A selector naming another field is a 400.
	SelectableFields func(obj runtime.Object) fields.Set
	// CreateGate, when set, is asked before every create through the
	// API; an error it returns is the answer (the custom resources of a
	// CRD being deleted: 405, as upstream). It reads state that changes
	// while the descriptor stays the same.
	CreateGate func() error
	// AllowCreateOnUpdate lets PUT create a missing object (upstream: yes
	// for events and leases, no for everything else, nodes included).
	AllowCreateOnUpdate bool
	// DeleteCollection is the deletecollection verb: DELETE on the
	// collection path removes every object the selectors match (upstream
	// serves it on every resource but namespaces).
	DeleteCollection bool
	// Subresources the apiserver routes besides the object itself:
	// "status" (the Strategy's PrepareForStatusUpdate decides what it may
	// change), "scale" (Scale says how), "finalize" (namespaces).
	// Subresources that need a running container are not here but in
	// ContainerSubresources.
	Subresources []string
	// ContainerSubresources are the subresources upstream serves by
	// reaching a running container through its kubelet (pods' log, exec,
	// attach, portforward). minicp runs no containers: the apiserver
	// answers them with a Status that says so instead of a bare 404.
	ContainerSubresources []string
	// Scale maps the object to and from the autoscaling/v1 Scale served at
	// its "scale" subresource (`kubectl scale`). Nil: no scale.
	Scale *ScaleRules

	// Indexes are the field-selector indexes the watch cache keeps: a LIST
	// or WATCH whose field selector requires Index.Field to equal a value
	// reads only the objects with that value and wakes only the watchers
	// that asked for it (a kubelet's spec.nodeName=<node> over all pods).
	// Every Index.Field must be one of SelectableFields.
	Indexes []Index
	// NotCached keeps the resource out of the watch cache: every read goes
	// to etcd. For a custom resource version whose stored objects need a
	// conversion webhook (which minicp never calls): a cache could never
	// list them, and each read answers the Status that says why.
	NotCached bool
	// WatchCacheSize is the resource's default watch window (events kept
	// in memory) when --watch-cache-sizes does not name it; 0 uses
	// --default-watch-cache-size. Resources that change most (pods, every
	// node's Lease renewal) get larger windows.
	WatchCacheSize int

	// GarbageCollectorIgnored keeps the garbage collector from watching
	// the resource, as upstream's default ignore list does for events:
	// their objects are many and short-lived, and neither own nor are
	// owned. The controller manager hands the collector every resource
	// that sets it.
	GarbageCollectorIgnored bool

	// Printer is what `kubectl get` shows (its Table columns and rows).
	// Nil: Name and Age, as upstream's default table convertor.
	Printer *rest.Printer

	// TypeConverter turns the resource's objects into the typed trees
	// server-side apply merges and tracks field ownership on (the
	// managedFields of every write). Nil: the converter minicp shares for
	// every built-in kind, built from the schema compiled into client-go's
	// apply configurations (typeconverter.Builtin). A
	// custom resource sets the converter built from its CRD's schema for
	// this version; its objects are *unstructured.Unstructured, which the
	// apiserver converts between versions by their apiVersion alone.
	TypeConverter managedfields.TypeConverter

	// New and NewList return empty objects of the resource's Go types.
	New     func() runtime.Object
	NewList func() runtime.Object

	// fieldManagers holds the field managers built for this descriptor,
	// one per subresource ("" for the object itself): subresource ->
	// *managedfields.FieldManager. Filled lazily by FieldManager, read
	// and written by concurrent requests; sync.Map needs no lock of ours.
	fieldManagers sync.Map
}

// TTLPolicy says how a resource's keys are bound to etcd leases.
type TTLPolicy int

const (
	// TTLNone: plain keys, which live until deleted.
	TTLNone TTLPolicy = iota
	// TTLEvent: every write binds the key to a lease of Options.EventTTL
	// (--event-ttl), shared by the writes of a short window (lease.go).
	TTLEvent
)

// Index is one field-selector index of the watch cache.
type Index struct {
	// Field is the field selector the index serves, e.g. "spec.nodeName".
	Field string
	// Value returns obj's value of Field. It must be cheap: the watch cache
	// calls it for every event it stores.
	Value func(obj runtime.Object) string
}

// ScaleRules reads and writes the replicas of a scalable object.
type ScaleRules struct {
	// Replicas returns spec.replicas, status.replicas and the label
	// selector of the pods (as a string, status.selector).
	Replicas func(obj runtime.Object) (spec, status int32, selector string)
	// SetReplicas sets spec.replicas.
	SetReplicas func(obj runtime.Object, replicas int32)
	// ReplicasPath is where spec.replicas lives in the object, so that the
	// managedFields a Scale write records land on the object's field (a
	// custom resource names it in its CRD). Nil: spec.replicas.
	ReplicasPath fieldpath.Path
}

// GroupVersionResource returns the resource's identity for routing.
func (r *Resource) GroupVersionResource() schema.GroupVersionResource {
	return r.GroupVersion.WithResource(r.Name)
}

// GroupVersionKind returns the kind of the resource's objects.
func (r *Resource) GroupVersionKind() schema.GroupVersionKind {
	return r.GroupVersion.WithKind(r.Kind)
}

// GroupResource names the resource as upstream's flags, metrics and error
// messages do: "pods", "leases.coordination.k8s.io".
func (r *Resource) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: r.GroupVersion.Group, Resource: r.Name}
}

// HasSubresource reports whether the apiserver routes name under the resource.
func (r *Resource) HasSubresource(name string) bool { return slices.Contains(r.Subresources, name) }

// NeedsContainer reports whether name is one of ContainerSubresources.
func (r *Resource) NeedsContainer(name string) bool {
	return slices.Contains(r.ContainerSubresources, name)
}

// FieldManager returns the field manager of the resource's writes through
// subresource ("" for the object itself), calling build the first time it
// is asked for and keeping what build returns for the descriptor's life,
// so that a write does not build one. The registry never runs field
// managers; the apiserver builds them (their type converter, reset fields
// and object conversions are its business) and keeps them here, beside
// the descriptor they are derived from, because a descriptor never
// changes: a custom resource whose CRD changes gets a new descriptor and
// so new field managers, and the old ones go with the old descriptor.
//
// A managedfields.FieldManager is safe for concurrent use: it holds only
// what it was built with and keeps no state between calls, and upstream's
// kube-apiserver likewise builds one per resource handler and shares it
// among all its requests. Two requests that find none at the same time
// may both call build; the first to store its result wins and both use
// that one. A build that fails is not kept: the next write tries again.
func (r *Resource) FieldManager(subresource string, build func() (*managedfields.FieldManager, error)) (*managedfields.FieldManager, error) {
	if fm, ok := r.fieldManagers.Load(subresource); ok {
		return fm.(*managedfields.FieldManager), nil
	}
	fm, err := build()
	if err != nil {
		return nil, err
	}
	kept, _ := r.fieldManagers.LoadOrStore(subresource, fm)
	return kept.(*managedfields.FieldManager), nil
}

// strategy returns the resource's rules, rest.DefaultStrategy when it has
// none.
func (r *Resource) strategy() *rest.Strategy {
	if r.Strategy != nil {
		return r.Strategy
	}
	return rest.DefaultStrategy
}

// target is what the generic steps of a write need to know of r.
func (r *Resource) target() rest.Target {
	return rest.Target{Namespaced: r.Namespaced, GroupResource: r.GroupResource(), GroupKind: r.GroupVersionKind().GroupKind(), Strategy: r.strategy()}
}

// PrinterOf returns r's Printer, rest.DefaultPrinter when it has none.
func (r *Resource) PrinterOf() *rest.Printer {
	if r.Printer != nil {
		return r.Printer
	}
	return rest.DefaultPrinter
}
