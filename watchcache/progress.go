package watchcache

import (
	"context"
	"time"

	"google.golang.org/grpc/metadata"
)

// progressRequestPeriod is how often etcd is asked for a progress
// notification while readers wait for the cache (upstream: 100 ms).
const progressRequestPeriod = 100 * time.Millisecond

// feedStreamKey is the gRPC metadata key that gives each cached resource's
// etcd watch a watch stream of its own (etcd's client groups watches into
// streams by their context's metadata). etcd answers a progress request
// only once every watch of the stream has caught up, so a resource's
// progress never waits on another's, nor on client watches that go to
// etcd directly.
const feedStreamKey = "minicp-watch-cache"

// feedContext is the context of the cache's etcd watch for its resource,
// and of the progress requests meant for it.
func (c *resourceCache) feedContext(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, feedStreamKey, groupResource(c.res))
}

// requestProgress runs beside run. Why it is needed: etcd's revision is
// global, so after a write to any other resource etcd's current revision is
// ahead of everything this resource's watch has delivered, and a consistent
// read would wait for an event that never comes. A progress notification
// tells the cache "nothing of yours changed up to revision R". While some
// reader waits (waitFresh kicks this goroutine), it asks for one at once and
// then every progressRequestPeriod. It ends when ctx does.
func (c *resourceCache) requestProgress(ctx context.Context) {
	for {
		select {
		case <-c.kick:
		case <-ctx.Done():
			return
		}
		for c.waiting.Load() > 0 {
			if err := c.store.RequestWatchProgress(c.feedContext(ctx)); err != nil && ctx.Err() == nil {
				c.log.Debug("requesting etcd watch progress", "err", err)
			}
			select {
			case <-c.clock.After(progressRequestPeriod):
			case <-ctx.Done():
				return
			}
		}
	}
}
