package garbagecollector

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"minicp/controllers/workers"
	"minicp/internal/trim"
)

// DefaultWorkers is how many objects are looked at at once
// (kube-controller-manager's --concurrent-gc-syncs is 20; minicp's graphs
// are small).
const DefaultWorkers = 2

// Config configures a Controller.
type Config struct {
	// REST reaches the apiserver; the collector is one of its clients.
	REST *rest.Config
	// Workers is how many objects are looked at at once (default
	// DefaultWorkers).
	Workers int
	// SyncTimeout bounds the wait for the informers' first lists before
	// the workers start anyway (default 30s); resources not synced by then
	// count in garbagecollector_controller_resources_sync_error_total.
	SyncTimeout time.Duration
	// ResyncPeriod is how often discovery is read again, to watch the
	// resources served since (default 30s, as upstream).
	ResyncPeriod time.Duration
	// IgnoredResources are never watched, as upstream's collector takes
	// its ignore list (events, by default) from the controller manager.
	IgnoredResources []schema.GroupResource
	// Metrics is the stack's registry; nil registers nothing.
	Metrics prometheus.Registerer
	Logger  *slog.Logger
	// Recorder receives upstream's events (OwnerRefInvalidNamespace);
	// nil records none.
	Recorder events.EventRecorder
}

// ReasonOwnerRefInvalidNamespace is upstream's Warning on a dependent whose
// owner reference cannot be satisfied in its namespace: a cluster-scoped
// object naming a namespaced owner, or an owner that lives in another
// namespace. The collector treats such an owner as gone.
const ReasonOwnerRefInvalidNamespace = "OwnerRefInvalidNamespace"

// Controller is the garbage collector.
type Controller struct {
	cfg       Config
	http      *http.Client // shared by both clients; its idle connections are closed when Run ends
	metadata  metadata.Interface
	discovery discovery.DiscoveryInterface
	graph     *graph
	metrics   *metrics
	log       *slog.Logger
	ignored   map[schema.GroupResource]bool // cfg.IgnoredResources
	// rediscover asks Run's goroutine for a discovery now rather than at
	// the next resync: an informer met a resource no longer served.
	rediscover chan struct{}

	// resources is the last discovery's answer, replaced by Run's
	// goroutine at every resync and read by the workers.
	resources atomic.Pointer[resources]

	// queue holds the UIDs to look at; the informers' handlers add to it,
	// workers take from it. Run shuts it down on its way out.
	queue workqueue.TypedRateLimitingInterface[types.UID]
}

// New returns a collector for the apiserver cfg.REST points at.
func New(cfg Config) (*Controller, error) {
	if cfg.REST == nil {
		return nil, fmt.Errorf("garbage collector: no apiserver to talk to")
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.ResyncPeriod <= 0 {
		cfg.ResyncPeriod = 30 * time.Second
	}
	if cfg.SyncTimeout <= 0 {
		cfg.SyncTimeout = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	httpClient, err := rest.HTTPClientFor(cfg.REST)
	if err != nil {
		return nil, fmt.Errorf("garbage collector: %w", err)
	}
	md, err := metadata.NewForConfigAndClient(cfg.REST, httpClient)
	if err != nil {
		return nil, fmt.Errorf("garbage collector: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg.REST, httpClient)
	if err != nil {
		return nil, fmt.Errorf("garbage collector: %w", err)
	}
	c := &Controller{
		cfg: cfg, http: httpClient, metadata: md, discovery: disc, graph: newGraph(), log: cfg.Logger,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[types.UID](),
			workqueue.TypedRateLimitingQueueConfig[types.UID]{
				Name:            "garbage_collector_attempt_to_delete",
				MetricsProvider: newQueueMetrics(cfg.Metrics),
			}),
	}
	c.rediscover = make(chan struct{}, 1)
	c.ignored = map[schema.GroupResource]bool{}
	for _, gr := range cfg.IgnoredResources {
		c.ignored[gr] = true
	}
	c.metrics = newMetrics(cfg.Metrics, func() float64 { return float64(c.graph.size()) })
	return c, nil
}

// Run discovers the resources, watches their metadata, and looks at the
// objects the graph points to with cfg.Workers goroutines until ctx ends;
// it returns once they have all stopped.
func (c *Controller) Run(ctx context.Context) {
	// Last: a connection dialled for a request that was then cancelled
	// stays open and idle, and would hold up the apiserver's shutdown.
	defer c.http.CloseIdleConnections()
	defer c.queue.ShutDown()
	// client-go's informers log through their context: what they say (a
	// failed watch among it) goes to the collector's logger.
	ctx = klog.NewContext(ctx, logr.FromSlogHandler(c.log.Handler()))
	monitors := newMonitors()
	defer monitors.stopAll() // after ctx has ended: the informers' goroutines end with it
	if !c.syncResources(ctx, monitors) {
		return
	}
	c.waitForSync(ctx, monitors)

	pool := workers.Start(ctx, c.cfg.Workers, c.processNext)
	// Resources served later (custom resources) are watched from the next
	// discovery on, and those no longer served are no longer watched, as
	// upstream re-syncs its monitors.
	tick := time.NewTicker(c.cfg.ResyncPeriod)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-tick.C:
			c.syncResources(ctx, monitors)
		case <-c.rediscover:
			c.syncResources(ctx, monitors)
		}
	}
	c.queue.ShutDown()
	pool.Wait()
}

// syncResources discovers the served resources, starts an informer for
// each deletable one not yet monitored and, when discovery was complete,
// stops those of resources no longer served (a custom resource whose CRD
// is gone). Only Run's goroutine calls it. It reports false when nothing
// could be discovered at all.
func (c *Controller) syncResources(ctx context.Context, monitors *monitors) bool {
	res, err := discover(c.discovery, c.ignored)
	if err != nil {
		c.metrics.syncErrors.Inc()
		c.log.Warn("garbage collector: discovery incomplete", "err", err)
	}
	if res == nil {
		return false
	}
	c.resources.Store(res)
	served := map[schema.GroupVersionResource]bool{}
	for _, gvr := range res.watched {
		served[gvr] = true
		if monitors.has(gvr) {
			continue
		}
		informer := metadatainformer.NewFilteredMetadataInformer(c.metadata, gvr, metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
		err := informer.SetTransform(trim.ManagedFields) // fails only on a started informer
		if err == nil {
			err = informer.SetWatchErrorHandlerWithContext(c.watchErrorHandler)
		}
		if err == nil {
			_, err = informer.AddEventHandler(c.handlers(gvr))
		}
		if err != nil {
			c.metrics.syncErrors.Inc()
			c.log.Warn("garbage collector: cannot watch", "resource", gvr.String(), "err", err)
			continue
		}
		monitors.start(ctx, gvr, informer)
	}
	if err == nil {
		for _, gvr := range monitors.resources() {
			if !served[gvr] {
				monitors.stop(gvr)
				c.log.Info("garbage collector: resource no longer served; stopped watching it", "resource", gvr.String())
			}
		}
	}
	c.metrics.monitoredTotal.Set(float64(monitors.len()))
	return true
}

// waitForSync waits for every informer's first list, at most
// cfg.SyncTimeout: a resource that cannot be watched must not stop the
// collection of all the others.
func (c *Controller) waitForSync(ctx context.Context, monitors *monitors) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.SyncTimeout)
	defer cancel()
	for gvr, informer := range monitors.informers {
		if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
			c.metrics.syncErrors.Inc()
			c.log.Warn("garbage collector: resource not synced", "resource", gvr.String())
		}
	}
	c.log.Info("garbage collector: graph built", "resources", len(c.resources.Load().watched), "objects", c.graph.size())
}

// handlers feed the graph with one resource's events.
func (c *Controller) handlers(gvr schema.GroupVersionResource) cache.ResourceEventHandler {
	observe := func(obj any) {
		if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
			c.enqueue(c.graph.observe(gvr, m))
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    observe,
		UpdateFunc: func(_, obj any) { observe(obj) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
				c.enqueue(c.graph.forget(m.UID))
			}
		},
	}
}

func (c *Controller) enqueue(uids []types.UID) {
	for _, uid := range uids {
		c.queue.Add(uid)
	}
}

// processNext looks at one object from the queue; false once the queue is
// shut down.
func (c *Controller) processNext(ctx context.Context) bool {
	uid, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(uid)
	err := c.attempt(ctx, uid)
	switch {
	case err == nil:
		c.queue.Forget(uid)
	case ctx.Err() != nil:
	default:
		c.log.Info("garbage collector: will retry", "uid", uid, "reason", err)
		c.queue.AddRateLimited(uid)
	}
	return true
}
