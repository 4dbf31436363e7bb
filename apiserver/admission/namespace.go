package admission

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/registry"
)

// NamespaceLifecycleName is the admission plugin that keeps objects inside
// namespaces that exist and are not being deleted, as upstream's.
const NamespaceLifecycleName = "NamespaceLifecycle"

// immortalNamespaces may never be deleted (403), as upstream.
var immortalNamespaces = map[string]bool{
	metav1.NamespaceDefault: true, metav1.NamespaceSystem: true, metav1.NamespacePublic: true,
}

// namespaceLifecycle is upstream's NamespaceLifecycle plugin:
//
//   - DELETE of "default", "kube-system" or "kube-public" is 403 Forbidden
//     ("this namespace may not be deleted");
//   - an object in a namespace that does not exist is 404
//     (`namespaces "foo" not found`), for every operation but DELETE;
//   - CREATE in a Terminating namespace is 403 Forbidden ("unable to create
//     new content in namespace foo because it is being terminated"), with
//     the NamespaceTerminating cause, so that the namespace controller's
//     sweep is not raced by new objects.
//
// Upstream reads namespaces from an informer and falls back to a live read
// when the cache does not know the namespace. minicp does the same through
// the registry: a resourceVersion "0" read (the watch cache, when one is in
// front of etcd), then a quorum read if that finds nothing.
type namespaceLifecycle struct {
	store      registry.Interface
	namespaces *registry.Resource
}

// NewNamespaceLifecycle returns the NamespaceLifecycle plugin, reading
// namespaces through store as the table describes them.
func NewNamespaceLifecycle(store registry.Interface, table *registry.Table) Plugin {
	res, _ := table.Lookup(corev1.SchemeGroupVersion.WithResource("namespaces"))
	return &namespaceLifecycle{store: store, namespaces: res}
}

func (l *namespaceLifecycle) Name() string { return NamespaceLifecycleName }

func (l *namespaceLifecycle) Admit(ctx context.Context, a *Attributes) error {
	if a.Resource == l.namespaces {
		if a.Operation == Delete && immortalNamespaces[a.Name] {
			return apierrors.NewForbidden(a.Resource.GroupVersionResource().GroupResource(), a.Name, errors.New("this namespace may not be deleted"))
		}
		return nil
	}
	if !a.Resource.Namespaced || a.Namespace == "" || a.Operation == Delete {
		return nil
	}
	ns, err := l.lookup(ctx, a.Namespace)
	if err != nil {
		return err
	}
	if a.Operation != Create || ns.Status.Phase != corev1.NamespaceTerminating {
		return nil
	}
	gr := a.Resource.GroupVersionResource().GroupResource()
	if a.Subresource != "" {
		gr.Resource += "/" + a.Subresource
	}
	forbidden := apierrors.NewForbidden(gr, a.Name,
		fmt.Errorf("unable to create new content in namespace %s because it is being terminated", a.Namespace))
	forbidden.ErrStatus.Details.Causes = append(forbidden.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    corev1.NamespaceTerminatingCause,
		Message: fmt.Sprintf("namespace %s is being terminated", a.Namespace),
		Field:   "metadata.namespace",
	})
	return forbidden
}

// lookup reads a namespace from the cache if it has it, from etcd if not.
func (l *namespaceLifecycle) lookup(ctx context.Context, name string) (*corev1.Namespace, error) {
	obj, err := l.store.Get(ctx, l.namespaces, "", name, registry.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		obj, err = l.store.Get(ctx, l.namespaces, "", name, registry.GetOptions{})
	}
	if err != nil {
		return nil, err
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("the store returned %T for namespace %q", obj, name))
	}
	return ns, nil
}
