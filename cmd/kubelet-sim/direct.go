package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"

	"minicp/lease"
	"minicp/registry"
)

// directPrefix holds the baseline's keys, apart from the apiserver's.
const directPrefix = "/kubelet-sim-direct/"

// directKey is one node's key in the baseline, owned by one worker.
type directKey struct {
	key       string
	lease     *coordinationv1.Lease
	rev       int64     // mod revision of the last write
	lastWrite time.Time // zero before the first renewal
}

// runDirect writes the agent's renewal load straight to etcd: the same
// nodes, leases encoded as the apiserver stores them, renewed every
// quarter of the lease duration, evenly spread; each renewal is one
// transaction, If(ModRevision == last) Then(Put) Else(Get), the apiserver's
// optimistic write without its read, binding, HTTP and encoding layers.
func runDirect(ctx context.Context, cfg *config, etcd *clientv3.Client, out io.Writer) error {
	n, workers := cfg.agent.Nodes, cfg.agent.Workers
	interval := cfg.agent.LeaseDuration / 4
	info, ok := runtime.SerializerInfoForMediaType(registry.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		return fmt.Errorf("no protobuf serializer")
	}
	codec := registry.Codecs.EncoderForVersion(info.Serializer, coordinationv1.SchemeGroupVersion)
	fmt.Fprintf(out, "kubelet-sim: %s renewing straight into etcd at %v under %s, every %s; %d workers\n",
		describeNodes(cfg.agent), etcd.Endpoints(), directPrefix, interval, workers)

	var stats lease.Stats
	var written atomic.Int64 // keys written at least once
	// Worker w owns keys w, w+workers, ...; the pacer sends it their
	// indexes, so a key is never written by two goroutines.
	queues := make([]chan *directKey, workers)
	var wg sync.WaitGroup
	for w := range workers {
		queues[w] = make(chan *directKey, n/workers+1)
		wg.Add(1)
		go func() { // renews the keys it is sent; ends when its queue is closed
			defer wg.Done()
			for k := range queues[w] {
				renewDirect(ctx, etcd, codec, k, cfg.agent.LeaseDuration, &stats, &written)
			}
		}()
	}
	keys := make([]*directKey, n)
	for i := range keys {
		name := fmt.Sprintf("%s%d", cfg.agent.NodePrefix, i)
		seconds := int32(cfg.agent.LeaseDuration / time.Second)
		// The object the apiserver stores for a node's Lease, byte for byte
		// the same size: its metadata, the Node as owner, the spec.
		keys[i] = &directKey{key: directPrefix + name, lease: &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: lease.NodeLeaseNamespace, UID: uuid.NewUUID(), CreationTimestamp: metav1.Now(),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: name, UID: uuid.NewUUID()}},
			},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &name, LeaseDurationSeconds: &seconds},
		}}
	}
	r := newReporter(out, cfg, etcd)
	snapshot := func() lease.Snapshot {
		s := stats.Snapshot(time.Now())
		s.Registered = int(written.Load())
		return s
	}
	paced := make(chan struct{}) // closed by the pacer when it returns
	go func() {                  // the pacer: sends each key to its worker when due, until ctx ends
		defer close(paced)
		pace(ctx, keys, queues, interval)
	}()
	r.loop(ctx, snapshot)
	<-paced
	for _, q := range queues {
		close(q)
	}
	wg.Wait()
	r.summary(snapshot())
	return nil
}

// pace sends key i at start + m*interval + i*interval/n for m = 0, 1, ...
func pace(ctx context.Context, keys []*directKey, queues []chan *directKey, interval time.Duration) {
	start, n := time.Now(), len(keys)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for sent := 0; ; {
		due := int(time.Since(start) * time.Duration(n) / interval)
		for ; sent <= due; sent++ {
			select {
			case queues[sent%n%len(queues)] <- keys[sent%n]:
			case <-ctx.Done():
				return
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// renewDirect writes one renewal of k: a create the first time, then a
// compare-and-swap on its last mod revision.
func renewDirect(ctx context.Context, etcd *clientv3.Client, codec runtime.Encoder, k *directKey, duration time.Duration,
	stats *lease.Stats, written *atomic.Int64) {
	now := time.Now()
	k.lease.Spec.RenewTime = &metav1.MicroTime{Time: now}
	data, err := runtime.Encode(codec, k.lease)
	if err != nil {
		stats.RecordFailure()
		return
	}
	cmp := clientv3.Compare(clientv3.ModRevision(k.key), "=", k.rev)
	resp, err := etcd.Txn(ctx).If(cmp).Then(clientv3.OpPut(k.key, string(data))).Else(clientv3.OpGet(k.key)).Commit()
	done := time.Now()
	switch {
	case err != nil:
		if ctx.Err() == nil { // not cut short by the end of the run
			stats.RecordFailure()
		}
		return
	case !resp.Succeeded: // someone else wrote it (or a leftover from an earlier run): take its revision
		stats.RecordConflict()
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
			k.rev = kvs[0].ModRevision
		}
		return
	}
	if k.lastWrite.IsZero() {
		written.Add(1)
	}
	lapsed := !k.lastWrite.IsZero() && done.Sub(k.lastWrite) > duration
	stats.RecordRenewal(done.Sub(now), lapsed)
	k.rev, k.lastWrite = resp.Header.Revision, done
}
