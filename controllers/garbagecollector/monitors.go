package garbagecollector

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// monitors are the running metadata informers, one per watched resource,
// each with a stop of its own: a resource that stops being served (its
// CRD deleted) loses its informer without disturbing the others. Only
// Run's goroutine uses a monitors.
type monitors struct {
	informers map[schema.GroupVersionResource]cache.SharedIndexInformer
	// cancels end each informer's context; wg counts their goroutines.
	cancels map[schema.GroupVersionResource]context.CancelFunc
	wg      sync.WaitGroup
}

func newMonitors() *monitors {
	return &monitors{
		informers: map[schema.GroupVersionResource]cache.SharedIndexInformer{},
		cancels:   map[schema.GroupVersionResource]context.CancelFunc{},
	}
}

func (m *monitors) has(gvr schema.GroupVersionResource) bool { _, ok := m.informers[gvr]; return ok }

func (m *monitors) len() int { return len(m.informers) }

// resources lists the monitored resources.
func (m *monitors) resources() []schema.GroupVersionResource {
	out := make([]schema.GroupVersionResource, 0, len(m.informers))
	for gvr := range m.informers {
		out = append(out, gvr)
	}
	return out
}

// start runs informer until ctx ends or stop is called for gvr.
func (m *monitors) start(ctx context.Context, gvr schema.GroupVersionResource, informer cache.SharedIndexInformer) {
	ctx, cancel := context.WithCancel(ctx)
	m.informers[gvr], m.cancels[gvr] = informer, cancel
	m.wg.Add(1)
	// The informer's goroutine ends with ctx (stop, stopAll or Run's end).
	go func() {
		defer m.wg.Done()
		informer.RunWithContext(ctx)
	}()
}

// stop ends gvr's informer (without waiting for it).
func (m *monitors) stop(gvr schema.GroupVersionResource) {
	if cancel := m.cancels[gvr]; cancel != nil {
		cancel()
	}
	delete(m.informers, gvr)
	delete(m.cancels, gvr)
}

// stopAll ends every informer and waits for their goroutines.
func (m *monitors) stopAll() {
	for gvr := range m.informers {
		m.stop(gvr)
	}
	m.wg.Wait()
}

// watchErrorHandler is what the informers do with a failed list or watch.
// A custom resource whose CRD is deleted answers 404 until a discovery
// drops its informer; rather than log that as "Failed to watch" at every
// retry until the next resync, the handler asks Run for a discovery now,
// which stops the informer with one info line. Other errors are logged
// as client-go logs them.
func (c *Controller) watchErrorHandler(ctx context.Context, r *cache.Reflector, err error) {
	if apierrors.IsNotFound(err) {
		select {
		case c.rediscover <- struct{}{}:
		default: // one is pending already
		}
		return
	}
	cache.DefaultWatchErrorHandler(ctx, r, err)
}
