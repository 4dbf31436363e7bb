package registry

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"k8s.io/apimachinery/pkg/util/sets"
)

func configMapsResource(t *testing.T) *Resource {
	return mustResource(t, corev1.SchemeGroupVersion, "configmaps")
}

func createConfigMap(t *testing.T, s *Store, name string, finalizers ...string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: finalizers}}
	out, err := s.Create(testContext(t), configMapsResource(t), "default", cm, WriteOptions{})
	if err != nil {
		t.Fatalf("creating configmap %s: %v", name, err)
	}
	return out.(*corev1.ConfigMap)
}

func setFinalizers(finalizers ...string) UpdateFunc {
	return func(cur runtime.Object) (runtime.Object, error) {
		cur.(*corev1.ConfigMap).Finalizers = finalizers
		return cur, nil
	}
}

// A finalizer keeps any object: DELETE marks it, the update removing the
// last finalizer deletes it, and watchers see MODIFIED then DELETED.
func TestAFinalizerKeepsAConfigMapUntilTheUpdateThatRemovesItDeletesIt(t *testing.T) {
	s, client := newTestStore(t, Options{})
	ctx := testContext(t)
	res := configMapsResource(t)
	created := createConfigMap(t, s, "cm", "example.com/hold")
	w, err := s.Watch(ctx, res, "default", ListOptions{ResourceVersion: created.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	out, err := s.Delete(ctx, res, "default", "cm", DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	marked := out.(*corev1.ConfigMap)
	if marked.DeletionTimestamp == nil || marked.DeletionGracePeriodSeconds == nil || *marked.DeletionGracePeriodSeconds != 0 {
		t.Fatalf("after DELETE: deletionTimestamp %v grace %v, want set and 0", marked.DeletionTimestamp, marked.DeletionGracePeriodSeconds)
	}
	again, err := s.Delete(ctx, res, "default", "cm", DeleteOptions{})
	if err != nil || again.(*corev1.ConfigMap).ResourceVersion != marked.ResourceVersion {
		t.Fatalf("second DELETE: %v %v, want the object unchanged at %s", again, err, marked.ResourceVersion)
	}

	_, _, err = s.Update(ctx, res, "default", "cm", UpdateOptions{}, setFinalizers("example.com/hold", "example.com/late"))
	if !apierrors.IsInvalid(err) {
		t.Fatalf("adding a finalizer after deletion started: got %v, want 422 Invalid", err)
	}

	gone, _, err := s.Update(ctx, res, "default", "cm", UpdateOptions{}, setFinalizers())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Get(ctx, KeyFor(res, "default", "cm"))
	if err != nil || len(resp.Kvs) != 0 {
		t.Fatalf("key after the last finalizer went: %v %v, want it deleted", resp.Kvs, err)
	}
	if rvOf(t, gone.(*corev1.ConfigMap)) != resp.Header.Revision {
		t.Errorf("update answered at %s, want the deletion's revision %d", gone.(*corev1.ConfigMap).ResourceVersion, resp.Header.Revision)
	}
	for _, want := range []watch.EventType{watch.Modified, watch.Deleted} {
		select {
		case ev := <-w.ResultChan():
			if ev.Type != want {
				t.Fatalf("got %s, want %s", ev.Type, want)
			}
		case <-ctx.Done():
			t.Fatalf("no %s event", want)
		}
	}
}

func TestDeletePreconditionsAndDryRunLeaveAFinalizedObjectAlone(t *testing.T) {
	s, client := newTestStore(t, Options{})
	ctx := testContext(t)
	res := configMapsResource(t)
	created := createConfigMap(t, s, "cm", "example.com/hold")
	before, _ := client.Get(ctx, KeyFor(res, "default", "cm"))

	wrongUID := types.UID("not-its-uid")
	_, err := s.Delete(ctx, res, "default", "cm", DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrongUID}})
	if !apierrors.IsConflict(err) {
		t.Fatalf("DELETE with a wrong UID: got %v, want 409", err)
	}
	out, err := s.Delete(ctx, res, "default", "cm", DeleteOptions{DryRun: true})
	if err != nil || out.(*corev1.ConfigMap).DeletionTimestamp == nil {
		t.Fatalf("dry-run DELETE: %v %v, want the object as it would be marked", out, err)
	}
	after, _ := client.Get(ctx, KeyFor(res, "default", "cm"))
	if after.Kvs[0].ModRevision != before.Kvs[0].ModRevision {
		t.Fatalf("dry run wrote: mod revision %d -> %d", before.Kvs[0].ModRevision, after.Kvs[0].ModRevision)
	}
	rv := created.ResourceVersion
	if _, err := s.Delete(ctx, res, "default", "cm", DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}}); err != nil {
		t.Fatalf("DELETE with the right resourceVersion: %v", err)
	}
}

// Propagation policies become finalizers, only when a garbage collector
// runs to remove them.
func TestPropagationPoliciesAddTheGarbageCollectorsFinalizers(t *testing.T) {
	policy := func(p metav1.DeletionPropagation) *metav1.DeletionPropagation { return &p }
	cases := []struct {
		name       string
		gc         bool
		opts       DeleteOptions
		finalizers []string // nil: deleted at once
	}{
		{"Foreground adds foregroundDeletion", true, DeleteOptions{PropagationPolicy: policy(metav1.DeletePropagationForeground)}, []string{metav1.FinalizerDeleteDependents}},
		{"Orphan adds orphan", true, DeleteOptions{PropagationPolicy: policy(metav1.DeletePropagationOrphan)}, []string{metav1.FinalizerOrphanDependents}},
		{"Background deletes at once", true, DeleteOptions{PropagationPolicy: policy(metav1.DeletePropagationBackground)}, nil},
		{"no policy deletes at once", true, DeleteOptions{}, nil},
		{"orphanDependents true adds orphan", true, DeleteOptions{OrphanDependents: new(true)}, []string{metav1.FinalizerOrphanDependents}},
		{"without a garbage collector Orphan deletes at once", false, DeleteOptions{PropagationPolicy: policy(metav1.DeletePropagationOrphan)}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, client := newTestStore(t, Options{GarbageCollector: tc.gc})
			ctx := testContext(t)
			res := configMapsResource(t)
			createConfigMap(t, s, "owner")
			out, err := s.Delete(ctx, res, "default", "owner", tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			resp, _ := client.Get(ctx, KeyFor(res, "default", "owner"))
			if tc.finalizers == nil {
				if len(resp.Kvs) != 0 {
					t.Fatalf("owner still stored, want it deleted at once")
				}
				return
			}
			got := out.(*corev1.ConfigMap)
			if len(resp.Kvs) != 1 || got.DeletionTimestamp == nil || !sets.New(got.Finalizers...).Equal(sets.New(tc.finalizers...)) {
				t.Fatalf("got finalizers %v deletionTimestamp %v, want %v and set", got.Finalizers, got.DeletionTimestamp, tc.finalizers)
			}
		})
	}
}
