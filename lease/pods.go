package lease

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// podRef names one pod to finish deleting: its UID is the DELETE's
// precondition, so a pod recreated under the same name is left alone.
type podRef struct {
	namespace, name string
	uid             types.UID
}

// watchOwnPods ends the graceful deletion of the pods on the agent's
// nodes, as a kubelet does once it has stopped a pod's containers: a
// DELETE with gracePeriodSeconds 0. Simulated pods run no containers, so
// they stop at once. A kubelet watches its own pods with the field
// selector spec.nodeName=<node>; the agent speaks for many nodes, so it
// watches every bound pod once (spec.nodeName!=) and keeps those of its
// nodes. Once Stop has been called nothing finishes them: they stay
// Terminating, as on a node whose kubelet died.
func (a *Agent) watchOwnPods(ctx context.Context) {
	if len(a.nodes) == 0 || !a.cfg.FinishPodDeletions {
		return
	}
	a.podFactory = informers.NewSharedInformerFactoryWithOptions(a.client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = "spec.nodeName!=" }))
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[podRef]())
	onPod := func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if ok && pod.DeletionTimestamp != nil && a.byName[pod.Spec.NodeName] != nil {
			queue.Add(podRef{namespace: pod.Namespace, name: pod.Name, uid: pod.UID})
		}
	}
	// The handler reads the immutable byName map and adds to the queue:
	// safe on the informer's goroutine.
	if _, err := a.podFactory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    onPod,
		UpdateFunc: func(_, obj any) { onPod(obj) },
	}); err != nil {
		a.log.Error("cannot watch the simulated nodes' pods; their deletions will not finish", "err", err)
		return
	}
	a.podFactory.Start(ctx.Done())
	a.wg.Add(2)
	go func() { // shuts the queue down when ctx ends, which ends the worker
		defer a.wg.Done()
		<-ctx.Done()
		queue.ShutDown()
	}()
	go func() { // deletes one pod at a time; ends when the queue shuts down
		defer a.wg.Done()
		for a.finishPodDeletion(ctx, queue) {
		}
	}()
}

// finishPodDeletion deletes one pod from the queue with grace 0; false
// once the queue is shut down.
func (a *Agent) finishPodDeletion(ctx context.Context, queue workqueue.TypedRateLimitingInterface[podRef]) bool {
	ref, quit := queue.Get()
	if quit {
		return false
	}
	defer queue.Done(ref)
	zero := int64(0)
	err := a.client.CoreV1().Pods(ref.namespace).Delete(ctx, ref.name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero,
		Preconditions:      &metav1.Preconditions{UID: &ref.uid},
	})
	switch {
	case err == nil, apierrors.IsNotFound(err), apierrors.IsConflict(err):
		queue.Forget(ref)
		if err == nil {
			a.log.Debug("pod stopped and deleted", "namespace", ref.namespace, "pod", ref.name)
		}
	case ctx.Err() == nil:
		a.log.Info("deleting a terminated pod failed; will retry", "namespace", ref.namespace, "pod", ref.name, "err", err)
		queue.AddRateLimited(ref)
	}
	return true
}
