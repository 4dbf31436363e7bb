package registry

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"
)

// revisionPollInterval is how often a read that asked for a revision etcd has
// not reached yet looks again.
const revisionPollInterval = 20 * time.Millisecond

// Get reads one object. ResourceVersion "" is a linearizable (quorum) read;
// "0" means any state will do and is a serializable read, answered by the
// local member alone; "N" is a quorum read that must see revision N or later.
func (s *Store) Get(ctx context.Context, res *Resource, namespace, name string, opts GetOptions) (runtime.Object, error) {
	minRev, err := resourceVersionToRevision(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	key := KeyFor(res, namespace, name)
	var getOpts []clientv3.OpOption
	if opts.ResourceVersion == "0" {
		getOpts = append(getOpts, clientv3.WithSerializable())
	}
	var resp *clientv3.GetResponse
	err = s.readNotOlderThan(ctx, minRev, func(ctx context.Context) (int64, error) {
		var err error
		resp, err = s.client.Get(ctx, key, getOpts...)
		if err != nil {
			return 0, storageError(err)
		}
		return resp.Header.Revision, nil
	})
	if err != nil {
		return nil, err
	}
	if len(resp.Kvs) == 0 {
		return nil, notFound(res, name)
	}
	return s.decode(res, resp.Kvs[0].Value, resp.Kvs[0].ModRevision)
}

// readNotOlderThan calls read until it reports a revision of at least
// minRev. etcd's revision only grows, so a read that is behind is retried for
// up to Options.TooLargeResourceVersionWait (a client may have learnt of a
// revision from another member, or from a write still being applied here);
// after that the answer is 504 "Too large resource version", which client-go
// retries. minRev 0 accepts the first read.
func (s *Store) readNotOlderThan(ctx context.Context, minRev int64, read func(context.Context) (int64, error)) error {
	rev, err := read(ctx)
	if err != nil || rev >= minRev {
		return err
	}
	deadline := time.NewTimer(s.opts.TooLargeResourceVersionWait)
	defer deadline.Stop()
	tick := time.NewTicker(revisionPollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return storageError(ctx.Err())
		case <-deadline.C:
			return tooLargeResourceVersion(minRev, rev)
		case <-tick.C:
		}
		if rev, err = read(ctx); err != nil || rev >= minRev {
			return err
		}
	}
}
