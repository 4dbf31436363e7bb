package crd

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions"
	listers "k8s.io/apiextensions-apiserver/pkg/client/listers/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"minicp/controllers/workers"
)

// DefaultWorkers is how many CRDs are synced at once.
const DefaultWorkers = 2

// Controller sets CRDs' names and conditions and cleans up deleted ones.
type Controller struct {
	client  clientset.Interface
	dynamic dynamic.Interface
	log     *slog.Logger
	// lister reads the informer's CRDs; set by Run before the workers start.
	lister listers.CustomResourceDefinitionLister
	// queue holds the names of CRDs to sync; the informer's handlers add
	// to it, workers take from it. Run shuts it down on its way out.
	queue workqueue.TypedRateLimitingInterface[string]
}

// New returns a controller talking to the apiserver cfg points at.
func New(cfg *rest.Config, log *slog.Logger) (*Controller, error) {
	client, err := clientset.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("crd controller: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("crd controller: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Controller{
		client: client, dynamic: dyn, log: log,
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
	}, nil
}

// Run watches CRDs and syncs them with n goroutines until ctx ends;
// it returns once they have all stopped.
func (c *Controller) Run(ctx context.Context, n int) {
	defer c.queue.ShutDown()
	factory := externalversions.NewSharedInformerFactory(c.client, 0)
	informer := factory.Apiextensions().V1().CustomResourceDefinitions()
	c.lister = informer.Lister()
	if _, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueue(obj) },
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			// Its names are free now: the CRDs of its group may take them.
			if crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok {
				c.enqueueGroup(crd.Spec.Group, crd.Name)
			}
		},
	}); err != nil {
		c.log.Error("crd controller: cannot watch CRDs", "err", err)
		return
	}
	factory.Start(ctx.Done()) // the informer's goroutines end with ctx
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), informer.Informer().HasSynced) {
		return
	}
	workers.Run(ctx, n, c.queue.ShutDown, c.processNext)
}

func (c *Controller) enqueue(obj any) {
	if crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok {
		c.queue.Add(crd.Name)
	}
}

// enqueueGroup queues every CRD of group but except.
func (c *Controller) enqueueGroup(group, except string) {
	crds, err := c.lister.List(labels.Everything())
	if err != nil {
		return
	}
	for _, crd := range crds {
		if crd.Spec.Group == group && crd.Name != except {
			c.queue.Add(crd.Name)
		}
	}
}

// processNext syncs one CRD from the queue; false once the queue is shut
// down.
func (c *Controller) processNext(ctx context.Context) bool {
	name, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(name)
	requeue, err := c.sync(ctx, name)
	switch {
	case err == nil && requeue > 0:
		c.queue.Forget(name)
		c.queue.AddAfter(name, requeue)
	case err == nil:
		c.queue.Forget(name)
	case ctx.Err() != nil:
	case apierrors.IsNotFound(err):
		c.queue.Forget(name) // deleted meanwhile: nothing left to do
	case apierrors.IsConflict(err):
		c.queue.Add(name) // the informer has, or will soon have, the newer state
	default:
		c.log.Info("crd controller: will retry", "crd", name, "reason", err)
		c.queue.AddRateLimited(name)
	}
	return true
}

// sync moves one CRD on: cleanup when it is being deleted, else names and
// conditions. A positive duration asks to look again after it (custom
// resources still being deleted).
func (c *Controller) sync(ctx context.Context, name string) (time.Duration, error) {
	crd, err := c.lister.Get(name)
	switch {
	case apierrors.IsNotFound(err):
		return 0, nil
	case err != nil:
		return 0, err
	case crd.DeletionTimestamp != nil:
		return c.finalize(ctx, crd.DeepCopy())
	}
	return 0, c.accept(ctx, crd.DeepCopy())
}
