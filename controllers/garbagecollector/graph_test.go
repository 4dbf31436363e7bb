package garbagecollector

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var configMaps = corev1.SchemeGroupVersion.WithResource("configmaps")

func object(name string, uid types.UID, owners ...types.UID) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: uid}}
	for _, o := range owners {
		m.OwnerReferences = append(m.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: string(o), UID: o})
	}
	return m
}

func TestTheGraphQueuesTheDependentsOfAnOwnerThatGoes(t *testing.T) {
	g := newGraph()
	if work := g.observe(configMaps, object("owner", "o")); len(work) != 0 {
		t.Fatalf("an owner with no owners queued %v", work)
	}
	if work := g.observe(configMaps, object("dep", "d", "o")); len(work) != 0 {
		t.Fatalf("a dependent of a present owner queued %v", work)
	}
	if deps := g.dependents("o"); len(deps) != 1 || deps[0].uid != "d" {
		t.Fatalf("dependents of o: got %v, want d", deps)
	}
	if work := g.forget("o"); !slices.Equal(work, []types.UID{"d"}) {
		t.Fatalf("forgetting the owner queued %v, want [d]", work)
	}
}

func TestTheGraphQueuesADependentWhoseOwnerItHasNotSeen(t *testing.T) {
	g := newGraph()
	if work := g.observe(configMaps, object("dep", "d", "never-seen")); !slices.Equal(work, []types.UID{"d"}) {
		t.Fatalf("got %v, want [d]: only a quorum read can say whether the owner exists", work)
	}
}

func TestTheGraphQueuesAnOwnerBeingDeletedWithACollectorFinalizer(t *testing.T) {
	g := newGraph()
	owner := object("owner", "o")
	g.observe(configMaps, owner)
	g.observe(configMaps, object("dep", "d", "o"))
	now := metav1.NewTime(time.Now())
	owner.DeletionTimestamp = &now
	owner.Finalizers = []string{metav1.FinalizerDeleteDependents}
	if work := g.observe(configMaps, owner); !slices.Equal(work, []types.UID{"o"}) {
		t.Fatalf("got %v, want [o]", work)
	}
	// The dependent going is what a foreground owner waits for.
	if work := g.forget("d"); !slices.Equal(work, []types.UID{"o"}) {
		t.Fatalf("forgetting the dependent queued %v, want [o]", work)
	}
	if deps := g.dependents("o"); len(deps) != 0 {
		t.Fatalf("dependents left: %v", deps)
	}
}
