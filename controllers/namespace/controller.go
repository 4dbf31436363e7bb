package namespace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"

	"minicp/controllers/workers"
	"minicp/internal/trim"
)

// DefaultWorkers is how many namespaces are swept at once.
const DefaultWorkers = 2

// Controller empties and finalizes terminating namespaces.
type Controller struct {
	client  kubernetes.Interface
	dynamic dynamic.Interface
	log     *slog.Logger

	// queue holds the names of namespaces to sync; the informer's handlers
	// add to it, workers take from it. Run shuts it down on its way out.
	queue workqueue.TypedRateLimitingInterface[string]
}

// New returns a controller talking to the apiserver cfg points at.
func New(cfg *rest.Config, log *slog.Logger) (*Controller, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("namespace controller: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("namespace controller: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Controller{
		client:  client,
		dynamic: dyn,
		log:     log,
		queue:   workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
	}, nil
}

// Run watches namespaces and syncs the terminating ones with n
// goroutines until ctx ends; it returns once they have all stopped.
func (c *Controller) Run(ctx context.Context, n int) {
	defer c.queue.ShutDown()
	factory := informers.NewSharedInformerFactoryWithOptions(c.client, 0, informers.WithTransform(trim.ManagedFields))
	informer := factory.Core().V1().Namespaces().Informer()
	enqueue := func(obj any) {
		if ns, ok := obj.(*corev1.Namespace); ok && ns.DeletionTimestamp != nil {
			c.queue.Add(ns.Name)
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		c.log.Error("namespace controller: cannot watch namespaces", "err", err)
		return
	}
	factory.Start(ctx.Done()) // the informer's goroutines end with ctx
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return
	}
	workers.Run(ctx, n, c.queue.ShutDown, c.processNext)
}

// processNext syncs one namespace from the queue; false once the queue is
// shut down.
func (c *Controller) processNext(ctx context.Context) bool {
	name, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(name)
	err := c.sync(ctx, name)
	switch {
	case err == nil:
		c.queue.Forget(name)
	case ctx.Err() != nil:
	default:
		c.log.Info("namespace controller: will retry", "namespace", name, "reason", err)
		c.queue.AddRateLimited(name)
	}
	return true
}

// errContentRemaining means objects were deleted (or appeared) during the
// sweep; the namespace is swept again before it is finalized.
var errContentRemaining = errors.New("content remains in the namespace")

// sync deletes the content of a terminating namespace and, once a sweep
// finds nothing, removes the controller's finalizer.
func (c *Controller) sync(ctx context.Context, name string) error {
	ns, err := c.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	case ns.DeletionTimestamp == nil || !hasKubernetesFinalizer(ns):
		return nil
	}
	start := time.Now()
	deleted, err := c.deleteContent(ctx, name)
	if err != nil {
		return err
	}
	if deleted > 0 {
		c.log.Info("namespace controller: deleted content", "namespace", name, "objects", deleted)
		return errContentRemaining
	}
	if err := c.finalize(ctx, name); err != nil {
		return err
	}
	c.log.Info("namespace controller: namespace finalized", "namespace", name, "took", time.Since(start))
	return nil
}

// deleteContent deletes every object of every namespaced resource in
// namespace, and returns how many it found.
func (c *Controller) deleteContent(ctx context.Context, namespace string) (int, error) {
	resources, err := deletableResources(c.client.Discovery())
	if err != nil {
		return 0, err
	}
	found := 0
	var errs []error
	for _, gvr := range resources {
		client := c.dynamic.Resource(gvr).Namespace(namespace)
		list, err := client.List(ctx, metav1.ListOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("listing %s: %w", gvr.Resource, err))
			continue
		}
		for _, item := range list.Items {
			found++
			err := client.Delete(ctx, item.GetName(), metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting %s %s: %w", gvr.Resource, item.GetName(), err))
			}
		}
	}
	return found, errors.Join(errs...)
}

// deletableResources lists the namespaced resources discovery offers that
// can be listed and deleted, as upstream's controller does.
func deletableResources(d discovery.DiscoveryInterface) ([]schema.GroupVersionResource, error) {
	lists, err := discovery.ServerPreferredNamespacedResources(d)
	if err != nil {
		return nil, fmt.Errorf("discovering namespaced resources: %w", err)
	}
	var out []schema.GroupVersionResource
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			return nil, err
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !hasVerb(r.Verbs, "list") || !hasVerb(r.Verbs, "delete") {
				continue
			}
			out = append(out, gv.WithResource(r.Name))
		}
	}
	return out, nil
}

// finalize removes the "kubernetes" finalizer through the finalize
// subresource, retrying on conflicts with a fresh read. The apiserver
// deletes the namespace when that was its last finalizer.
func (c *Controller) finalize(ctx context.Context, name string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ns, err := c.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		var kept []corev1.FinalizerName
		for _, f := range ns.Spec.Finalizers {
			if f != corev1.FinalizerKubernetes {
				kept = append(kept, f)
			}
		}
		ns.Spec.Finalizers = kept
		_, err = c.client.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
}

func hasKubernetesFinalizer(ns *corev1.Namespace) bool {
	for _, f := range ns.Spec.Finalizers {
		if f == corev1.FinalizerKubernetes {
			return true
		}
	}
	return false
}

func hasVerb(verbs metav1.Verbs, verb string) bool {
	for _, v := range verbs {
		if v == verb {
			return true
		}
	}
	return false
}
