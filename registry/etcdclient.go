package registry

// The Store reaches etcd only through the client built here: etcd's own
// clientv3.Client with its KV, Watcher and Lease replaced by wrappers that,
// for every request,
//
//  1. route it to the etcd cluster that holds its key: keys under an
//     overridden prefix ("/registry/events/" with
//     --etcd-servers-overrides=/events#URL, M10) go to
//     that cluster, everything else to the main one;
//  2. ask the fault hook first, which may delay or fail it (the triage
//     labs' slow etcd, M9 and M15);
//  3. time it into etcd_request_duration_seconds{operation,type}, count it
//     in etcd_requests_total and etcd_request_errors_total, and charge it
//     to the request's trace (reqtrace.Etcd).
//
// Wrapping the client rather than each call keeps every etcd request of
// the Store measured, including ones added later. The `operation` label
// is upstream's: "get" (one key), "list" (a range), "listWithCount"
// (count only), "create", "update" and "delete" (transactions, told apart
// by what they compare and do). Lease requests, which upstream does not
// measure, appear as "leaseGrant", "leaseKeepAlive", "leaseTimeToLive" and
// "leaseRevoke" with an empty type.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minicp/reqtrace"
)

// EtcdOp is the kind of etcd request a fault is injected on: the axes the
// triage drill (M15) names once the apiserver is known to wait for etcd.
type EtcdOp string

// The etcd request kinds the fault hook sees.
const (
	EtcdRange EtcdOp = "range" // Get: reads of one key or a range
	EtcdTxn   EtcdOp = "txn"   // transactions, puts and deletes: every write
	EtcdWatch EtcdOp = "watch" // each response of a watch stream
	EtcdLease EtcdOp = "lease" // lease grant, keep-alive, time-to-live, revoke
)

// FaultHook is asked before every etcd request the Store makes (and before
// each response of a watch is passed on). It may sleep, honouring ctx, to
// make etcd look slow, or return an error to fail the request as etcd
// would. resource is the request's resource as metrics name it ("pods",
// "leases.coordination.k8s.io"), "" when a request has none (leases).
type FaultHook interface {
	BeforeEtcd(ctx context.Context, op EtcdOp, resource string) error
}

// etcdRoute sends the keys under prefix to client.
type etcdRoute struct {
	prefix string // ends with "/"
	client *clientv3.Client
}

// etcdBackends is the set of etcd clusters a Store uses and the hook in
// front of them. It is immutable once built.
type etcdBackends struct {
	main      *clientv3.Client
	routes    []etcdRoute
	hook      FaultHook // nil: no faults
	resources *Table    // names the resource of a key for metrics and faults
	metrics   *storageMetrics
}

// newEtcdBackends routes the resources of overrides to their clients and
// everything else to main.
func newEtcdBackends(main *clientv3.Client, resources *Table, overrides map[schema.GroupResource]*clientv3.Client, hook FaultHook, metrics *storageMetrics) (*etcdBackends, error) {
	b := &etcdBackends{main: main, hook: hook, resources: resources, metrics: metrics}
	for gr, client := range overrides {
		res, ok := resources.LookupGroupResource(gr)
		if !ok {
			return nil, fmt.Errorf("registry: etcd override for %q: minicp serves no such resource", gr)
		}
		if client == nil {
			return nil, fmt.Errorf("registry: etcd override for %q has no client", gr)
		}
		b.routes = append(b.routes, etcdRoute{prefix: res.Prefix + "/", client: client})
	}
	return b, nil
}

// leaseClient is the cluster that grants the etcd leases of res's keys.
func (b *etcdBackends) leaseClient(res *Resource) *clientv3.Client {
	return b.clientForKey([]byte(res.Prefix + "/"))
}

// clientForKey returns the cluster that holds key.
func (b *etcdBackends) clientForKey(key []byte) *clientv3.Client {
	for _, r := range b.routes {
		if strings.HasPrefix(string(key), r.prefix) {
			return r.client
		}
	}
	return b.main
}

// client returns a clientv3.Client whose KV and Watcher requests are
// routed, faulted and measured, and whose Lease requests go to leases (one
// of the backends: a lease lives in one cluster). Cluster, Maintenance and
// Auth requests go to the main cluster unchanged. Closing the returned
// client closes none of the backends.
func (b *etcdBackends) client(leases *clientv3.Client) *clientv3.Client {
	c := clientv3.NewCtxClient(b.main.Ctx())
	c.Cluster, c.Maintenance, c.Auth = b.main.Cluster, b.main.Maintenance, b.main.Auth
	c.KV = &measuredKV{b: b}
	c.Watcher = &measuredWatcher{b: b}
	c.Lease = &measuredLease{Lease: leases.Lease, b: b}
	return c
}

// do runs one etcd request: the fault hook, then call, timed and traced.
func do[T any](ctx context.Context, b *etcdBackends, op EtcdOp, operation, resource string, call func() (T, error)) (T, error) {
	start := time.Now()
	defer reqtrace.From(ctx).Begin(reqtrace.Etcd)()
	var out T
	var err error
	if b.hook != nil {
		err = b.hook.BeforeEtcd(ctx, op, resource)
	}
	if err == nil {
		out, err = call()
	}
	b.metrics.record(operation, resource, err, start)
	return out, err
}

// measuredKV is the KV of a Store's client.
type measuredKV struct{ b *etcdBackends }

func (k *measuredKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	op := clientv3.OpGet(key, opts...)
	operation := "get"
	switch {
	case op.IsCountOnly():
		operation = "listWithCount"
	case len(op.RangeBytes()) > 0:
		operation = "list"
	}
	return do(ctx, k.b, EtcdRange, operation, k.b.resourceOfKey(op.KeyBytes()), func() (*clientv3.GetResponse, error) {
		return k.b.clientForKey(op.KeyBytes()).Get(ctx, key, opts...)
	})
}

// GetStream is Get answered in chunks (etcd v3.7's RangeStream); only
// opening the stream is faulted and measured.
func (k *measuredKV) GetStream(ctx context.Context, key string, opts ...clientv3.OpOption) (clientv3.GetStreamChan, error) {
	op := clientv3.OpGet(key, opts...)
	operation := "get"
	if len(op.RangeBytes()) > 0 {
		operation = "list"
	}
	return do(ctx, k.b, EtcdRange, operation, k.b.resourceOfKey(op.KeyBytes()), func() (clientv3.GetStreamChan, error) {
		return k.b.clientForKey(op.KeyBytes()).GetStream(ctx, key, opts...)
	})
}

func (k *measuredKV) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	return do(ctx, k.b, EtcdTxn, "update", k.b.resourceOfKey([]byte(key)), func() (*clientv3.PutResponse, error) {
		return k.b.clientForKey([]byte(key)).Put(ctx, key, val, opts...)
	})
}

func (k *measuredKV) Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.DeleteResponse, error) {
	return do(ctx, k.b, EtcdTxn, "delete", k.b.resourceOfKey([]byte(key)), func() (*clientv3.DeleteResponse, error) {
		return k.b.clientForKey([]byte(key)).Delete(ctx, key, opts...)
	})
}

// Compact compacts the main cluster; compaction is an operator's request,
// not a Store's, and is neither faulted nor measured.
func (k *measuredKV) Compact(ctx context.Context, rev int64, opts ...clientv3.CompactOption) (*clientv3.CompactResponse, error) {
	return k.b.main.Compact(ctx, rev, opts...)
}

func (k *measuredKV) Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	switch {
	case op.IsGet():
		resp, err := k.Get(ctx, string(op.KeyBytes()), opOptionsOf(op)...)
		if err != nil {
			return clientv3.OpResponse{}, err
		}
		return resp.OpResponse(), nil
	case op.IsTxn():
		cmps, thens, elses := op.Txn()
		resp, err := k.Txn(ctx).If(cmps...).Then(thens...).Else(elses...).Commit()
		if err != nil {
			return clientv3.OpResponse{}, err
		}
		return resp.OpResponse(), nil
	}
	return do(ctx, k.b, EtcdTxn, "update", k.b.resourceOfKey(op.KeyBytes()), func() (clientv3.OpResponse, error) {
		return k.b.clientForKey(op.KeyBytes()).Do(ctx, op)
	})
}

// opOptionsOf rebuilds the options of a range Op, for Do.
func opOptionsOf(op clientv3.Op) []clientv3.OpOption {
	opts := []clientv3.OpOption{clientv3.WithRev(op.Rev())}
	if end := op.RangeBytes(); len(end) > 0 {
		opts = append(opts, clientv3.WithRange(string(end)))
	}
	if op.IsSerializable() {
		opts = append(opts, clientv3.WithSerializable())
	}
	if op.IsCountOnly() {
		opts = append(opts, clientv3.WithCountOnly())
	}
	if op.IsKeysOnly() {
		opts = append(opts, clientv3.WithKeysOnly())
	}
	return opts
}

func (k *measuredKV) Txn(ctx context.Context) clientv3.Txn { return &measuredTxn{ctx: ctx, b: k.b} }

// measuredTxn collects a transaction and sends it on Commit, to the
// cluster of its first key.
type measuredTxn struct {
	ctx          context.Context
	b            *etcdBackends
	cmps         []clientv3.Cmp
	thens, elses []clientv3.Op
}

func (t *measuredTxn) If(cs ...clientv3.Cmp) clientv3.Txn {
	t.cmps = append(t.cmps, cs...)
	return t
}

func (t *measuredTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	t.thens = append(t.thens, ops...)
	return t
}

func (t *measuredTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	t.elses = append(t.elses, ops...)
	return t
}

func (t *measuredTxn) Commit() (*clientv3.TxnResponse, error) {
	key := t.firstKey()
	return do(t.ctx, t.b, EtcdTxn, t.operation(), t.b.resourceOfKey(key), func() (*clientv3.TxnResponse, error) {
		return t.b.clientForKey(key).Txn(t.ctx).If(t.cmps...).Then(t.thens...).Else(t.elses...).Commit()
	})
}

func (t *measuredTxn) firstKey() []byte {
	switch {
	case len(t.cmps) > 0:
		return t.cmps[0].KeyBytes()
	case len(t.thens) > 0:
		return t.thens[0].KeyBytes()
	case len(t.elses) > 0:
		return t.elses[0].KeyBytes()
	}
	return nil
}

// operation names a transaction as upstream's storage does: a put guarded
// by "the key was never created" is a create, another put an update, a
// delete a delete.
func (t *measuredTxn) operation() string {
	for _, op := range t.thens {
		switch {
		case op.IsDelete():
			return "delete"
		case op.IsPut():
			for _, c := range t.cmps {
				if c.GetCompare().Target == pb.Compare_CREATE {
					return "create"
				}
			}
			return "update"
		}
	}
	return "txn"
}

// measuredWatcher is the Watcher of a Store's client.
type measuredWatcher struct{ b *etcdBackends }

// Watch opens the watch on the cluster that holds key and relays its
// responses, each after the fault hook (a delay holds the stream back; an
// error cuts it, as a lost connection would). The returned channel is
// closed when the underlying one is, or when the hook cuts the stream; the
// relay goroutine ends once ctx does.
func (w *measuredWatcher) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	in := w.b.clientForKey([]byte(key)).Watch(ctx, key, opts...)
	if w.b.hook == nil {
		return in
	}
	resource := w.b.resourceOfKey([]byte(key))
	out := make(chan clientv3.WatchResponse)
	go func() {
		// Deferred in this order so that out is closed first (the consumer
		// sees the end at once), then in is drained until etcd's client
		// closes it, which it does when ctx ends.
		defer func() {
			for range in {
			}
		}()
		defer close(out)
		for resp := range in {
			if err := w.b.hook.BeforeEtcd(ctx, EtcdWatch, resource); err != nil {
				return
			}
			select {
			case out <- resp:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// RequestProgress asks every cluster: a progress request reaches the
// watches of one client's streams only.
func (w *measuredWatcher) RequestProgress(ctx context.Context) error {
	err := w.b.main.RequestProgress(ctx)
	for _, r := range w.b.routes {
		err = errors.Join(err, r.client.RequestProgress(ctx))
	}
	return err
}

// Close closes nothing: the backends' watchers belong to their clients.
func (w *measuredWatcher) Close() error { return nil }

// measuredLease is the Lease of a Store's client: one cluster's leases,
// faulted and measured.
type measuredLease struct {
	clientv3.Lease // Leases and KeepAlive streams pass through
	b              *etcdBackends
}

func (l *measuredLease) Grant(ctx context.Context, ttl int64) (*clientv3.LeaseGrantResponse, error) {
	return do(ctx, l.b, EtcdLease, "leaseGrant", "", func() (*clientv3.LeaseGrantResponse, error) {
		return l.Lease.Grant(ctx, ttl)
	})
}

func (l *measuredLease) Revoke(ctx context.Context, id clientv3.LeaseID) (*clientv3.LeaseRevokeResponse, error) {
	return do(ctx, l.b, EtcdLease, "leaseRevoke", "", func() (*clientv3.LeaseRevokeResponse, error) {
		return l.Lease.Revoke(ctx, id)
	})
}

func (l *measuredLease) TimeToLive(ctx context.Context, id clientv3.LeaseID, opts ...clientv3.LeaseOption) (*clientv3.LeaseTimeToLiveResponse, error) {
	return do(ctx, l.b, EtcdLease, "leaseTimeToLive", "", func() (*clientv3.LeaseTimeToLiveResponse, error) {
		return l.Lease.TimeToLive(ctx, id, opts...)
	})
}

func (l *measuredLease) KeepAliveOnce(ctx context.Context, id clientv3.LeaseID) (*clientv3.LeaseKeepAliveResponse, error) {
	return do(ctx, l.b, EtcdLease, "leaseKeepAlive", "", func() (*clientv3.LeaseKeepAliveResponse, error) {
		return l.Lease.KeepAliveOnce(ctx, id)
	})
}

// Close closes nothing: the lease client belongs to its backend.
func (l *measuredLease) Close() error { return nil }
