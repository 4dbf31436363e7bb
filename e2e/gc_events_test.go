package e2e

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"minicp/controllers/garbagecollector"
	"minicp/controlplane"
	"minicp/e2e/framework"
)

// The garbage collector records upstream's Warning OwnerRefInvalidNamespace
// on a dependent whose owner reference cannot be satisfied in its
// namespace, and treats it as upstream does: an owner in another namespace
// counts as gone (the dependent is collected), a namespaced owner named by
// a cluster-scoped object cannot be resolved (the object stays).
func TestGarbageCollectorWarnsAboutOwnerReferencesAcrossNamespaces(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) { c.EnableGarbageCollector = true }})
	ctx := framework.Context(t, time.Minute)
	if _, err := s.Clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	owner, err := s.Clientset.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}}
	dep, err := s.Clientset.CoreV1().ConfigMaps("elsewhere").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dep", OwnerReferences: ref}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node, err := s.Clientset.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "owned-node", OwnerReferences: ref}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	warning := func(namespace, name string) *corev1.Event {
		list, err := s.Clientset.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: fields.Set{"involvedObject.name": name}.String()})
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range list.Items {
			if e.Reason == garbagecollector.ReasonOwnerRefInvalidNamespace {
				return &list.Items[i]
			}
		}
		return nil
	}
	framework.Eventually(t, 20*time.Second, "the dependent in another namespace to be collected, with a warning", func() bool {
		_, err := s.Clientset.CoreV1().ConfigMaps("elsewhere").Get(ctx, "dep", metav1.GetOptions{})
		return apierrors.IsNotFound(err) && warning("elsewhere", "dep") != nil
	})
	e := warning("elsewhere", "dep")
	want := fmt.Sprintf(`ownerRef [v1/ConfigMap, namespace: elsewhere, name: owner, uid: %s] does not exist in namespace "elsewhere"`, owner.UID)
	if e.Type != corev1.EventTypeWarning || e.Message != want || e.InvolvedObject.UID != dep.UID || e.InvolvedObject.Kind != "ConfigMap" {
		t.Errorf("warning on the dependent: %s %q about %+v; want Warning %q about the ConfigMap", e.Type, e.Message, e.InvolvedObject, want)
	}
	if source := reporter(*e); source != "garbage-collector-controller" {
		t.Errorf("warning reported by %q, want upstream's garbage-collector-controller", source)
	}

	// The cluster-scoped Node naming a namespaced owner: warned about
	// (events about cluster-scoped objects live in "default"), never collected.
	framework.Eventually(t, 20*time.Second, "a warning on the node", func() bool { return warning("default", "owned-node") != nil })
	if got, err := s.Clientset.CoreV1().Nodes().Get(ctx, "owned-node", metav1.GetOptions{}); err != nil || got.UID != node.UID {
		t.Errorf("the node with an unresolvable owner: %v, %v; want it kept", got, err)
	}
	if _, err := s.Clientset.CoreV1().ConfigMaps("default").Get(ctx, "owner", metav1.GetOptions{}); err != nil {
		t.Errorf("the owner itself: %v, want it untouched", err)
	}
}
