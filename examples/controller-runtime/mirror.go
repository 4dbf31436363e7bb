// Package mirror is a small controller-runtime controller, the example of
// testing a controller against minicp: for every ConfigMap labelled
// mirror=true it keeps a copy named <name>-mirror in the same namespace,
// with the same data, owned by the original (so the garbage collector, or
// a test, can tell where it came from).
//
// mirror_test.go starts minicp in-process with minicp/e2e/framework,
// runs a controller-runtime manager against it and polls for the
// reconciler's effect; `go test ./...` in this directory runs it.
package mirror

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

const (
	// Label marks a ConfigMap to mirror (value "true").
	Label = "mirror"
	// Suffix is appended to the name of a mirrored ConfigMap.
	Suffix = "-mirror"
)

// Reconciler keeps the mirror of each labelled ConfigMap equal to it.
type Reconciler struct {
	client.Client
}

// Reconcile creates or updates the mirror of the ConfigMap req names. A
// ConfigMap that is gone or no longer labelled needs nothing: its mirror
// is owned by it and goes with it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var src corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &src); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if src.Labels[Label] != "true" || !src.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	dst := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: src.Namespace, Name: src.Name + Suffix}}
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, dst, func() error {
		dst.Data = maps.Clone(src.Data)
		return controllerutil.SetControllerReference(&src, dst, r.Scheme())
	})
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		return ctrl.Result{Requeue: true}, nil // someone wrote first: read again
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("mirroring %s: %w", req.NamespacedName, err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("mirrored", "configmap", req.NamespacedName, "operation", op)
	return ctrl.Result{}, nil
}

// SetupWithManager watches labelled ConfigMaps and the mirrors they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	labelled, err := predicate.LabelSelectorPredicate(metav1.LabelSelector{MatchLabels: map[string]string{Label: "true"}})
	if err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("configmap-mirror").
		For(&corev1.ConfigMap{}, builder.WithPredicates(labelled)).
		Owns(&corev1.ConfigMap{}).
		Complete(r)
}
