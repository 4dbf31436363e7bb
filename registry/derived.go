package registry

// What the Store derives from a descriptor: the storage codec of its
// objects and, for a TTLEvent resource, the shared-lease manager of the
// etcd cluster its keys live in. Both are derived once per descriptor, on
// its first use, and kept by the descriptor's pointer, the pattern the
// watch cache and the apiserver's field managers follow too: a resource
// added to the table at run time (a custom resource) gets its own on its
// first request, and a descriptor that replaces another (a changed CRD)
// gets fresh ones, since a Resource never changes once in a table.

import (
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"
)

// derived is what the Store keeps for one descriptor.
type derived struct {
	codec  runtime.Codec
	leases *leaseManager // the cluster's shared leases; nil unless TTLEvent
}

// derivedFor returns what the Store derives from res, deriving it the
// first time. Two requests that find none at once may both derive it; the
// first to store its result wins and both use that one.
func (s *Store) derivedFor(res *Resource) (*derived, error) {
	if d, ok := s.derived.Load(res); ok {
		return d.(*derived), nil
	}
	codec, err := newStorageCodec(res, s.opts.StorageMediaType)
	if err != nil {
		return nil, err
	}
	d := &derived{codec: codec}
	if res.TTL == TTLEvent {
		d.leases = s.leaseManager(s.backends.leaseClient(res))
	}
	kept, _ := s.derived.LoadOrStore(res, d)
	return kept.(*derived), nil
}

// leaseManager returns the shared-lease manager of cluster, making it the
// first time: the TTLEvent resources stored in one cluster share it (a
// lease lives in one cluster).
func (s *Store) leaseManager(cluster *clientv3.Client) *leaseManager {
	s.leaseManagersMu.Lock()
	defer s.leaseManagersMu.Unlock()
	m := s.leaseManagers[cluster]
	if m == nil {
		m = newLeaseManager(s.backends.client(cluster), s.opts.Now)
		s.leaseManagers[cluster] = m
	}
	return m
}
