package crd

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
)

// recheck is how soon a CRD whose custom resources are still going is
// looked at again (their own finalizers may hold them).
const recheck = 250 * time.Millisecond

// finalize cleans up a deleted CRD that still carries the cleanup
// finalizer: it deletes every custom resource, and once none is left it
// removes the finalizer (the apiserver then deletes the CRD). It returns
// recheck while objects remain.
func (c *Controller) finalize(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) (time.Duration, error) {
	if !apihelpers.CRDHasFinalizer(crd, apiextensionsv1.CustomResourceCleanupFinalizer) {
		return 0, nil
	}
	if !apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
		// Never served: no custom resource can exist.
		return 0, c.removeFinalizer(ctx, crd, "NeverEstablished", "resource was never established")
	}
	if err := c.setTerminating(ctx, crd, "InstanceDeletionInProgress", "CustomResource deletion is in progress"); err != nil {
		return 0, err
	}
	remaining, err := c.deleteCustomResources(ctx, crd)
	if err != nil {
		return 0, c.setTerminating(ctx, crd, "InstanceDeletionFailed", fmt.Sprintf("could not delete instances: %v", err))
	}
	if remaining > 0 {
		return recheck, nil
	}
	return 0, c.removeFinalizer(ctx, crd, "InstanceDeletionCompleted", "removed all instances")
}

// servedResource is the resource the controller reaches the custom
// resources through: the storage version when served, else the first
// served version (every version reads the same objects).
func servedResource(crd *apiextensionsv1.CustomResourceDefinition) (schema.GroupVersionResource, bool) {
	var version string
	for _, v := range crd.Spec.Versions {
		if v.Served && (version == "" || v.Storage) {
			version = v.Name
		}
	}
	plural := crd.Status.AcceptedNames.Plural
	return schema.GroupVersionResource{Group: crd.Spec.Group, Version: version, Resource: plural}, version != "" && plural != ""
}

// deleteCustomResources deletes every custom resource of crd (one
// deletecollection per namespace that has some) and returns how many
// were there.
func (c *Controller) deleteCustomResources(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) (int, error) {
	gvr, ok := servedResource(crd)
	if !ok {
		return 0, nil
	}
	list, err := c.dynamic.Resource(gvr).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return 0, nil // no longer served: nothing can be reached (or remain) through it
	}
	if err != nil {
		return 0, err
	}
	namespaces := sets.New[string]()
	pending := 0
	for _, item := range list.Items {
		if item.GetDeletionTimestamp() == nil {
			namespaces.Insert(item.GetNamespace())
			pending++
		}
	}
	for ns := range namespaces {
		client := c.dynamic.Resource(gvr).Namespace(ns)
		if crd.Spec.Scope == apiextensionsv1.ClusterScoped {
			client = c.dynamic.Resource(gvr)
		}
		if err := client.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return 0, err
		}
	}
	if pending > 0 {
		c.log.Info("crd controller: deleting custom resources", "crd", crd.Name, "objects", pending)
	}
	return len(list.Items), nil
}

// setTerminating records the cleanup's progress in the Terminating condition.
func (c *Controller) setTerminating(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, reason, message string) error {
	old := apihelpers.FindCRDCondition(crd, apiextensionsv1.Terminating)
	if old != nil && old.Status == apiextensionsv1.ConditionTrue && old.Reason == reason && old.Message == message {
		return nil
	}
	apihelpers.SetCRDCondition(crd, apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue, Reason: reason, Message: message,
	})
	updated, err := c.client.ApiextensionsV1().CustomResourceDefinitions().UpdateStatus(ctx, crd, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	*crd = *updated
	return nil
}

// removeFinalizer records why cleanup is over and removes the finalizer;
// the apiserver deletes the CRD with that update.
func (c *Controller) removeFinalizer(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, reason, message string) error {
	apihelpers.SetCRDCondition(crd, apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionFalse, Reason: reason, Message: message,
	})
	updated, err := c.client.ApiextensionsV1().CustomResourceDefinitions().UpdateStatus(ctx, crd, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	apihelpers.CRDRemoveFinalizer(updated, apiextensionsv1.CustomResourceCleanupFinalizer)
	_, err = c.client.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		c.log.Info("crd controller: custom resources cleaned up; CRD finalized", "crd", crd.Name)
	}
	return err
}
