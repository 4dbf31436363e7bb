package registry

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Storage media types, as kube-apiserver's --storage-media-type accepts them.
const (
	MediaTypeProtobuf = "application/vnd.kubernetes.protobuf"
	MediaTypeJSON     = "application/json"
)

// DefaultMaxObjectBytes is etcd's default --max-request-bytes (1.5 MiB). A
// value larger than this would be refused by etcd; the Store refuses it first
// with 413 RequestEntityTooLarge.
const DefaultMaxObjectBytes = 1536 * 1024

// Options configure a Store. The zero value of every field means its default.
type Options struct {
	// StorageMediaType is how objects are encoded in etcd values:
	// MediaTypeProtobuf (default, the "k8s\x00" envelope) or MediaTypeJSON.
	StorageMediaType string
	// EventTTL is the TTL of the etcd lease every Event key is bound to
	// (kube-apiserver's --event-ttl). Default 1h.
	EventTTL time.Duration
	// KeyTTL, when set, binds the keys of other resources to etcd leases too:
	// it returns the TTL for an object about to be written, or 0 for a plain
	// key. Each such key gets an etcd lease of its own with exactly that TTL;
	// every write of the key reuses it and sends one KeepAlive, so the key
	// disappears TTL after its last write (keylease.go). Upstream binds only
	// Events; minicp binds Node Leases with it (M12).
	KeyTTL func(res *Resource, obj runtime.Object) time.Duration
	// MaxObjectBytes is the largest encoded object accepted (default
	// DefaultMaxObjectBytes); set it to etcd's --max-request-bytes.
	MaxObjectBytes int
	// TooLargeResourceVersionWait is how long a read asking for a
	// resourceVersion newer than etcd's current revision waits for etcd to
	// catch up before failing with 504 (default 3s, as upstream's cache).
	TooLargeResourceVersionWait time.Duration
	// EtcdOverrides stores some resources in other etcd clusters, as
	// kube-apiserver's --etcd-servers-overrides does (M10:
	// events on their own etcd). Their keys, watches and leases go to the
	// given client; everything else to the Store's main client. The Store
	// does not own these clients.
	EtcdOverrides map[schema.GroupResource]*clientv3.Client
	// Faults, when set, is asked before every etcd request, and may delay
	// or fail it (fault injection for the triage labs, etcdclient.go).
	Faults FaultHook
	// Metrics is the registry of the Store's stack: etcd_request_duration_seconds,
	// etcd_requests_total, etcd_request_errors_total and
	// apiserver_storage_objects are registered there. Nil: registered nowhere.
	Metrics prometheus.Registerer
	// GarbageCollector says a garbage collector runs against this store
	// (kube-apiserver's and kube-controller-manager's
	// --enable-garbage-collector): only then does a DELETE add the
	// "orphan" and "foregroundDeletion" finalizers that propagation
	// policies ask for, since nobody else would ever remove them.
	GarbageCollector bool
	// Now is the clock for creationTimestamp, deletionTimestamp and lease
	// reuse (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

func (o *Options) setDefaults() error {
	switch o.StorageMediaType {
	case "":
		o.StorageMediaType = MediaTypeProtobuf
	case MediaTypeProtobuf, MediaTypeJSON:
	default:
		return fmt.Errorf("registry: unsupported storage media type %q (want %q or %q)", o.StorageMediaType, MediaTypeProtobuf, MediaTypeJSON)
	}
	if o.EventTTL == 0 {
		o.EventTTL = time.Hour
	}
	if o.EventTTL < time.Second {
		return fmt.Errorf("registry: event TTL %v is shorter than etcd's 1s lease granularity", o.EventTTL)
	}
	if o.MaxObjectBytes == 0 {
		o.MaxObjectBytes = DefaultMaxObjectBytes
	}
	if o.TooLargeResourceVersionWait == 0 {
		o.TooLargeResourceVersionWait = 3 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Store is the etcd-backed implementation of Interface: every call is one or
// a few etcd requests, with no cache in between.
type Store struct {
	// client reaches every etcd cluster the Store uses, routing each key
	// to its cluster, with faults and metrics (etcdclient.go).
	client    *clientv3.Client
	opts      Options
	resources *Table
	// backends routes each key to its etcd cluster (EtcdOverrides).
	backends *etcdBackends
	// derived: *Resource -> *derived (derived.go). leaseManagersMu guards
	// leaseManagers, one shared-lease manager per etcd cluster.
	derived         sync.Map
	leaseManagersMu sync.Mutex
	leaseManagers   map[*clientv3.Client]*leaseManager
	keyLeases       *keyLeases // per-key etcd leases for keys KeyTTL binds
	metrics         *storageMetrics
	log             *slog.Logger
}

var _ Interface = (*Store)(nil)

// NewStore returns a Store of the resources of table, writing through
// client. The Store does not own the client: closing it is the caller's
// business.
func NewStore(client *clientv3.Client, table *Table, opts Options) (*Store, error) {
	if client == nil {
		return nil, fmt.Errorf("registry: nil etcd client")
	}
	if table == nil {
		return nil, fmt.Errorf("registry: a resource table is required")
	}
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	metrics := newStorageMetrics(opts.Metrics)
	backends, err := newEtcdBackends(client, table, opts.EtcdOverrides, opts.Faults, metrics)
	if err != nil {
		return nil, err
	}
	measured := backends.client(client)
	s := &Store{
		client:        measured,
		opts:          opts,
		resources:     table,
		backends:      backends,
		leaseManagers: map[*clientv3.Client]*leaseManager{},
		keyLeases:     newKeyLeases(measured),
		metrics:       metrics,
		log:           opts.Logger,
	}
	// The table's resources now, so that a descriptor the Store cannot
	// encode is an error here rather than on its first write; the ones
	// added later are derived on first use.
	for _, res := range table.All() {
		if _, err := s.derivedFor(res); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// newStorageCodec returns the codec res is stored with: its own media
// type, else the Store's, encoding to the resource's group version.
func newStorageCodec(res *Resource, mediaType string) (runtime.Codec, error) {
	if res.StorageCodec != nil {
		return res.StorageCodec, nil
	}
	if res.StorageMediaType != "" {
		mediaType = res.StorageMediaType
	}
	info, ok := runtime.SerializerInfoForMediaType(Codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		return nil, fmt.Errorf("registry: no serializer for %q (resource %s)", mediaType, res.GroupResource())
	}
	if form := res.StoredAs; form != nil {
		stored := Codecs.CodecForVersions(info.Serializer, info.Serializer, form.GroupVersion, form.GroupVersion)
		return convertingCodec{stored: stored, form: form}, nil
	}
	return Codecs.CodecForVersions(info.Serializer, info.Serializer, res.GroupVersion, res.GroupVersion), nil
}

// Resources returns the table the Store serves.
func (s *Store) Resources() *Table { return s.resources }

// Client returns the etcd client the Store writes through: it routes each
// key to its cluster (EtcdOverrides), passes the fault hook and records
// etcd_request_duration_seconds. Its Lease requests go to the main cluster.
func (s *Store) Client() *clientv3.Client { return s.client }

// Codec returns the codec objects of res are stored with: it encodes to the
// resource's group version in the Store's media type, and decodes both.
func (s *Store) Codec(res *Resource) runtime.Codec {
	if res.StorageCodec != nil {
		return res.StorageCodec
	}
	d, err := s.derivedFor(res)
	if err != nil {
		return runtime.NewCodec(runtime.NoopEncoder{}, runtime.NoopDecoder{})
	}
	return d.codec
}

// KeyFor returns the etcd key of one object, exactly as upstream lays them
// out: Prefix/<namespace>/<name> for namespaced resources, Prefix/<name>
// otherwise (e.g. "/registry/pods/default/nginx", "/registry/minions/node-1").
func KeyFor(res *Resource, namespace, name string) string {
	if res.Namespaced {
		return res.Prefix + "/" + namespace + "/" + name
	}
	return res.Prefix + "/" + name
}

// keyPrefixFor returns the prefix a LIST or WATCH ranges over, always with a
// trailing slash so that "/registry/pods/default/" never matches the
// namespace "default2".
func keyPrefixFor(res *Resource, namespace string) string {
	if res.Namespaced && namespace != "" {
		return res.Prefix + "/" + namespace + "/"
	}
	return res.Prefix + "/"
}

// encode turns obj into the bytes stored in etcd. The resourceVersion is
// cleared first: it is the key's mod revision, never part of the value.
func (s *Store) encode(res *Resource, obj runtime.Object) ([]byte, error) {
	if err := clearResourceVersion(obj); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	data, err := runtime.Encode(s.Codec(res), obj)
	if status := apiStatusOf(err); status != nil {
		return nil, status
	}
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("encoding %s: %w", res.Kind, err))
	}
	return data, nil
}

// decode turns stored bytes into an object of res stamped with rev as its
// resourceVersion. TypeMeta is left empty, as in objects upstream's storage
// returns; the HTTP encoder sets apiVersion and kind. Unstructured objects
// (custom resources) keep theirs: they have no other.
func (s *Store) decode(res *Resource, data []byte, rev int64) (runtime.Object, error) {
	obj := res.New()
	if _, _, err := s.Codec(res).Decode(data, nil, obj); err != nil {
		if status := apiStatusOf(err); status != nil {
			return nil, status
		}
		return nil, apierrors.NewInternalError(fmt.Errorf("decoding %s from etcd: %w", res.Kind, err))
	}
	if _, ok := obj.(runtime.Unstructured); !ok {
		obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	}
	if err := stampObject(obj, rev); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return obj, nil
}

// Decode turns a stored etcd value of res into an object stamped with rev,
// for tools that read etcd directly (minictl).
func (s *Store) Decode(res *Resource, data []byte, rev int64) (runtime.Object, error) {
	return s.decode(res, data, rev)
}

// checkSize refuses values etcd would refuse, with the API's 413.
func (s *Store) checkSize(key string, data []byte) error {
	if n := len(key) + len(data); n > s.opts.MaxObjectBytes {
		return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", s.opts.MaxObjectBytes))
	}
	return nil
}

// leaseFor returns how a write of obj binds its key: TTLEvent resources to
// the shared lease of EventTTL (upstream's --event-ttl), keys Options.KeyTTL gives a
// TTL to a lease of their own (keylease.go), everything else to none.
// current is the lease the key is bound to now, 0 for a new key.
func (s *Store) leaseFor(ctx context.Context, res *Resource, obj runtime.Object, current clientv3.LeaseID) (leaseBinding, error) {
	d, err := s.derivedFor(res)
	if err != nil {
		return leaseBinding{}, apierrors.NewInternalError(err)
	}
	if leases := d.leases; leases != nil {
		id, err := leases.get(ctx, s.opts.EventTTL)
		if err != nil {
			return leaseBinding{}, storageError(err)
		}
		return leaseBinding{opts: []clientv3.OpOption{clientv3.WithLease(id)}}, nil
	}
	if s.opts.KeyTTL == nil {
		return leaseBinding{}, nil
	}
	ttl := s.opts.KeyTTL(res, obj)
	if ttl <= 0 {
		return leaseBinding{}, nil
	}
	b, err := s.keyLeases.binding(ctx, current, ttl)
	if err != nil {
		return leaseBinding{}, storageError(err)
	}
	return b, nil
}

// renewLease sends the KeepAlive of a write that reuses its key's lease,
// alongside the write: it does not depend on the write, and etcd answers it
// only once the entries before it are applied, so sending it after the
// write would add a second wait. The returned function waits for the
// answer and reports whether the lease turned out to be gone: it had
// expired, etcd has revoked it (etcd answers a KeepAlive of an expired
// lease only once the revoke is applied), and the key went with it, or
// never got written. Any other failure is logged: the lease lives on until
// its TTL. The caller must call the function before its round ends.
func (s *Store) renewLease(ctx context.Context, key string, b leaseBinding) (lost func() bool) {
	if b.keepAlive == 0 {
		return func() bool { return false }
	}
	result := make(chan error, 1) // written once by the goroutine below
	go func() {                   // one KeepAlive; ends when etcd answers or ctx ends
		result <- s.keyLeases.keepAlive(ctx, b)
	}()
	return func() bool {
		err := <-result
		if isLeaseNotFound(err) {
			s.log.Info("a key's etcd lease expired as it was written; binding it to a new lease", "key", key, "lease", b.keepAlive)
			return true
		}
		if err != nil {
			s.log.Warn("keep-alive of a key's etcd lease failed", "key", key, "lease", b.keepAlive, "err", err)
		}
		return false
	}
}
