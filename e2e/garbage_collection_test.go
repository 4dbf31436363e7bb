package e2e

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"minicp/controlplane"
	"minicp/e2e/framework"
)

var configMapsGVR = corev1.SchemeGroupVersion.WithResource("configmaps")

// createOwned creates n ConfigMaps owned by owner (blockOwnerDeletion set
// when block), each held by the given finalizers.
func createOwned(t *testing.T, ctx context.Context, cs kubernetes.Interface, owner *corev1.ConfigMap, n int, block bool, finalizers ...string) []*corev1.ConfigMap {
	t.Helper()
	var out []*corev1.ConfigMap
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name:       owner.Name + "-dep-" + string(rune('a'+i)),
			Finalizers: finalizers,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, BlockOwnerDeletion: &block,
			}},
		}}
		got, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating dependent: %v", err)
		}
		out = append(out, got)
	}
	return out
}

func createHeld(t *testing.T, ctx context.Context, cs kubernetes.Interface, name string, finalizers ...string) *corev1.ConfigMap {
	t.Helper()
	cm, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: finalizers},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating configmap %s: %v", name, err)
	}
	return cm
}

func gone(ctx context.Context, cs kubernetes.Interface, name string) bool {
	_, err := cs.CoreV1().ConfigMaps("default").Get(ctx, name, metav1.GetOptions{})
	return apierrors.IsNotFound(err)
}

func deleteWith(t *testing.T, ctx context.Context, cs kubernetes.Interface, name string, policy metav1.DeletionPropagation) {
	t.Helper()
	if err := cs.CoreV1().ConfigMaps("default").Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
		t.Fatalf("deleting %s with %s: %v", name, policy, err)
	}
}

// A finalizer keeps any object, seen through client-go and the metadata
// client: DELETE stamps it, adding a finalizer is refused, removing the
// last one deletes it, and a watch sees MODIFIED then DELETED.
func TestAFinalizerKeepsAnObjectUntilItIsRemoved(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, time.Minute)
	cs := s.Clientset
	cm := createHeld(t, ctx, cs, "held", "example.com/hold")
	w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{ResourceVersion: cm.ResourceVersion, FieldSelector: "metadata.name=held"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	wrongUID := types.UID("another-object")
	err = cs.CoreV1().ConfigMaps("default").Delete(ctx, "held", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrongUID}})
	if !apierrors.IsConflict(err) {
		t.Fatalf("DELETE with another UID as precondition: got %v, want 409 Conflict", err)
	}
	if err := cs.CoreV1().ConfigMaps("default").Delete(ctx, "held", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	if cur, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "held", metav1.GetOptions{}); err != nil || cur.DeletionTimestamp != nil {
		t.Fatalf("after a dry-run DELETE: %v %v, want the object unmarked", cur, err)
	}
	rv := cm.ResourceVersion
	if err := cs.CoreV1().ConfigMaps("default").Delete(ctx, "held", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}}); err != nil {
		t.Fatal(err)
	}
	md, err := metadata.NewForConfig(s.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	got, err := md.Resource(configMapsGVR).Namespace("default").Get(ctx, "held", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("metadata GET after DELETE: %v", err)
	}
	if got.DeletionTimestamp == nil || got.DeletionGracePeriodSeconds == nil || *got.DeletionGracePeriodSeconds != 0 {
		t.Fatalf("after DELETE: deletionTimestamp %v grace %v, want set and 0", got.DeletionTimestamp, got.DeletionGracePeriodSeconds)
	}

	cur, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "held", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Finalizers = append(cur.Finalizers, "example.com/late")
	if _, err := cs.CoreV1().ConfigMaps("default").Update(ctx, cur, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("adding a finalizer after deletion started: got %v, want 422 Invalid", err)
	}
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := md.Resource(configMapsGVR).Namespace("default").Patch(ctx, "held", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("removing the finalizer: %v", err)
	}
	if !gone(ctx, cs, "held") {
		t.Fatal("still there after its last finalizer was removed")
	}
	for _, want := range []string{"MODIFIED", "DELETED"} {
		select {
		case ev := <-w.ResultChan():
			if string(ev.Type) != want {
				t.Fatalf("got %s, want %s", ev.Type, want)
			}
			if m := ev.Object.(*corev1.ConfigMap); m.DeletionTimestamp == nil {
				t.Fatalf("%s event without deletionTimestamp", ev.Type)
			}
		case <-ctx.Done():
			t.Fatalf("no %s event", want)
		}
	}
}

// Background: the owner goes at once, the garbage collector deletes the
// dependents after.
func TestBackgroundDeletionRemovesTheDependentsAfterTheOwner(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, time.Minute)
	cs := s.Clientset
	owner := createHeld(t, ctx, cs, "owner")
	deps := createOwned(t, ctx, cs, owner, 3, false)
	deleteWith(t, ctx, cs, "owner", metav1.DeletePropagationBackground)
	if !gone(ctx, cs, "owner") {
		t.Fatal("owner still there after a Background delete")
	}
	for _, d := range deps {
		framework.Eventually(t, 20*time.Second, "dependent "+d.Name+" to be collected", func() bool { return gone(ctx, cs, d.Name) })
	}
}

// Foreground: the owner stays, marked, until the dependents that block it
// are gone.
func TestForegroundDeletionKeepsTheOwnerUntilBlockingDependentsAreGone(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, time.Minute)
	cs := s.Clientset
	owner := createHeld(t, ctx, cs, "owner")
	deps := createOwned(t, ctx, cs, owner, 2, true, "example.com/hold")
	deleteWith(t, ctx, cs, "owner", metav1.DeletePropagationForeground)

	got, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "owner", metav1.GetOptions{})
	if err != nil || got.DeletionTimestamp == nil || len(got.Finalizers) != 1 || got.Finalizers[0] != metav1.FinalizerDeleteDependents {
		t.Fatalf("owner after a Foreground delete: %v %v, want it marked with %s", got, err, metav1.FinalizerDeleteDependents)
	}
	for _, d := range deps {
		framework.Eventually(t, 20*time.Second, "dependent "+d.Name+" to be marked for deletion", func() bool {
			cur, err := cs.CoreV1().ConfigMaps("default").Get(ctx, d.Name, metav1.GetOptions{})
			return err == nil && cur.DeletionTimestamp != nil
		})
	}
	if gone(ctx, cs, "owner") {
		t.Fatal("owner deleted while blocking dependents remain")
	}
	for _, d := range deps {
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		if _, err := cs.CoreV1().ConfigMaps("default").Patch(ctx, d.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	framework.Eventually(t, 20*time.Second, "the owner to go after its dependents", func() bool { return gone(ctx, cs, "owner") })
}

// Orphan: the dependents stay and lose their reference to the owner.
func TestOrphanDeletionKeepsTheDependentsWithoutTheirOwnerReference(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, time.Minute)
	cs := s.Clientset
	owner := createHeld(t, ctx, cs, "owner")
	deps := createOwned(t, ctx, cs, owner, 2, false)
	deleteWith(t, ctx, cs, "owner", metav1.DeletePropagationOrphan)
	framework.Eventually(t, 20*time.Second, "the owner to go once its dependents are orphaned", func() bool { return gone(ctx, cs, "owner") })
	for _, d := range deps {
		cur, err := cs.CoreV1().ConfigMaps("default").Get(ctx, d.Name, metav1.GetOptions{})
		if err != nil || len(cur.OwnerReferences) != 0 {
			t.Fatalf("dependent %s after an Orphan delete: %v %v, want it kept with no ownerReferences", d.Name, cur, err)
		}
	}
}

// An owner deleted and recreated under the same name is another object
// (another UID): the old owner's dependents are collected, the new one's
// are kept. The collector checks the UID with a quorum read.
func TestARecreatedOwnerDoesNotKeepTheOldOwnersDependents(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, time.Minute)
	cs := s.Clientset
	old := createHeld(t, ctx, cs, "owner")
	stale := createOwned(t, ctx, cs, old, 1, false)[0]
	deleteWith(t, ctx, cs, "owner", metav1.DeletePropagationBackground)
	fresh := createHeld(t, ctx, cs, "owner")
	if fresh.UID == old.UID {
		t.Fatal("recreated owner has the old UID")
	}
	kept := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: fresh.UID,
	}}}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, kept, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 20*time.Second, "the old owner's dependent to be collected", func() bool { return gone(ctx, cs, stale.Name) })
	if gone(ctx, cs, "kept") {
		t.Fatal("the recreated owner's dependent was collected")
	}
}

// With --enable-garbage-collector=false nothing collects dependents and
// DELETE adds no finalizer for the Orphan policy.
func TestWithoutTheGarbageCollectorDependentsStay(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(cfg *controlplane.Config) { cfg.EnableGarbageCollector = false }})
	ctx := framework.Context(t, time.Minute)
	cs := s.Clientset
	owner := createHeld(t, ctx, cs, "owner")
	dep := createOwned(t, ctx, cs, owner, 1, false)[0]
	deleteWith(t, ctx, cs, "owner", metav1.DeletePropagationOrphan)
	if !gone(ctx, cs, "owner") {
		t.Fatal("owner kept with no garbage collector to remove the orphan finalizer")
	}
	cur, err := cs.CoreV1().ConfigMaps("default").Get(ctx, dep.Name, metav1.GetOptions{})
	if err != nil || len(cur.OwnerReferences) != 1 {
		t.Fatalf("dependent: %v %v, want it kept as it was", cur, err)
	}
}

// The real kubectl: --cascade=orphan|foreground|background, and a delete
// that waits (kubectl's default) for an object held by a finalizer.
func TestKubectlDeleteCascadeAndWait(t *testing.T) {
	requireKubectl(t)
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, 2*time.Minute)
	cs := s.Clientset

	owner := createHeld(t, ctx, cs, "orphan-owner")
	deps := createOwned(t, ctx, cs, owner, 2, false)
	kubectl(t, s, "delete", "configmap", "orphan-owner", "--cascade=orphan")
	for _, d := range deps {
		cur, err := cs.CoreV1().ConfigMaps("default").Get(ctx, d.Name, metav1.GetOptions{})
		if err != nil || len(cur.OwnerReferences) != 0 {
			t.Fatalf("--cascade=orphan: dependent %s: %v %v, want it kept without ownerReferences", d.Name, cur, err)
		}
	}

	owner = createHeld(t, ctx, cs, "fg-owner")
	deps = createOwned(t, ctx, cs, owner, 2, true)
	kubectl(t, s, "delete", "configmap", "fg-owner", "--cascade=foreground")
	for _, d := range append(deps, owner) {
		if !gone(ctx, cs, d.Name) { // kubectl waited for the owner, which waited for them
			t.Fatalf("--cascade=foreground: %s still there when kubectl returned", d.Name)
		}
	}

	owner = createHeld(t, ctx, cs, "bg-owner")
	deps = createOwned(t, ctx, cs, owner, 2, false)
	kubectl(t, s, "delete", "configmap", "bg-owner", "--cascade=background")
	for _, d := range deps {
		framework.Eventually(t, 20*time.Second, "dependent "+d.Name+" to be collected", func() bool { return gone(ctx, cs, d.Name) })
	}

	createHeld(t, ctx, cs, "held", "example.com/hold")
	out, err := kubectlErr(t, s, "delete", "configmap", "held", "--timeout=2s")
	if err == nil {
		t.Fatalf("kubectl delete of an object held by a finalizer returned at once:\n%s", out)
	}
	assertContains(t, "kubectl delete --timeout=2s", out, "timed out waiting")
	out = kubectl(t, s, "get", "configmap", "held", "-o", "jsonpath={.metadata.deletionTimestamp}")
	if out == "" {
		t.Fatal("held object has no deletionTimestamp")
	}
	kubectl(t, s, "patch", "configmap", "held", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	if !gone(ctx, cs, "held") {
		t.Fatal("held object still there after its finalizer was removed")
	}
}

// The collector's view: a metadata informer (what it runs over every
// resource) syncs against minicp through watch-list with
// as=PartialObjectMetadata and sees objects come and go; and the stack's
// /metrics counts the collector's work.
func TestMetadataInformersAndTheCollectorsMetrics(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, time.Minute)
	md, err := metadata.NewForConfig(s.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	factory := metadatainformer.NewSharedInformerFactory(md, 0)
	informer := factory.ForResource(configMapsGVR).Informer()
	var mu sync.Mutex
	seen := map[string]string{}
	record := func(what string) func(any) {
		return func(obj any) {
			if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
				mu.Lock()
				seen[m.Name] = what
				mu.Unlock()
			}
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: record("added"), DeleteFunc: record("deleted")}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	factory.Start(stop)
	defer factory.Shutdown() // after stop is closed (defers run last-in, first-out)
	defer close(stop)
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatal("metadata informer never synced")
	}
	saw := func(name, what string) func() bool {
		return func() bool { mu.Lock(); defer mu.Unlock(); return seen[name] == what }
	}

	owner := createHeld(t, ctx, s.Clientset, "owner")
	dep := createOwned(t, ctx, s.Clientset, owner, 1, false)[0]
	framework.Eventually(t, framework.StateTimeout, "the metadata informer to see the dependent", saw(dep.Name, "added"))
	deleteWith(t, ctx, s.Clientset, "owner", metav1.DeletePropagationBackground)
	framework.Eventually(t, 20*time.Second, "the metadata informer to see the dependent collected", saw(dep.Name, "deleted"))

	resp, err := s.HTTP.Get(s.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`garbagecollector_controller_dependent_deletions_total{propagation_policy="Background"} 1`,
		"garbagecollector_controller_resources_sync_error_total 0",
		"garbagecollector_controller_owner_lookups_total",
		`workqueue_adds_total{name="garbage_collector_attempt_to_delete"}`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
