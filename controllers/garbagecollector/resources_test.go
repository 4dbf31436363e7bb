package garbagecollector

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

// The collector watches every deletable resource but events, of either
// group, as upstream's collector; it can still name an event's kind.
func TestDiscoverWatchesEveryDeletableResourceButEvents(t *testing.T) {
	verbs := metav1.Verbs{"create", "delete", "get", "list", "watch"}
	d := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", Kind: "Pod", Namespaced: true, Verbs: verbs},
			{Name: "pods/status", Kind: "Pod", Namespaced: true, Verbs: metav1.Verbs{"get"}},
			{Name: "events", Kind: "Event", Namespaced: true, Verbs: verbs},
		}},
		{GroupVersion: "events.k8s.io/v1", APIResources: []metav1.APIResource{
			{Name: "events", Kind: "Event", Namespaced: true, Verbs: verbs},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", Kind: "Deployment", Namespaced: true, Verbs: verbs},
		}},
	}}}
	res, err := discover(d, map[schema.GroupResource]bool{{Resource: "events"}: true, {Group: "events.k8s.io", Resource: "events"}: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []schema.GroupVersionResource{{Version: "v1", Resource: "pods"}, {Group: "apps", Version: "v1", Resource: "deployments"}}
	slices.SortFunc(res.watched, func(a, b schema.GroupVersionResource) int { return len(a.Group) - len(b.Group) })
	if !slices.Equal(res.watched, want) {
		t.Fatalf("watched %v, want %v", res.watched, want)
	}
	if _, ok := res.lookup("events.k8s.io/v1", "Event"); !ok {
		t.Fatalf("an event's kind is not known")
	}
}
