package registry

import (
	"fmt"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// widget returns a custom-resource-like descriptor of group example.com.
func widget(plural, version string) *Resource {
	gv := schema.GroupVersion{Group: "example.com", Version: version}
	return &Resource{
		GroupVersion: gv, Name: plural, SingularName: plural[:len(plural)-1], Kind: "Widget", ListKind: "WidgetList",
		Namespaced: true, Prefix: "/registry/example.com/" + plural, StorageMediaType: MediaTypeJSON, TextOnly: true,
		New:     func() runtime.Object { return &unstructured.Unstructured{} },
		NewList: func() runtime.Object { return &unstructured.UnstructuredList{} },
	}
}

// recorder is a TableSubscriber that keeps every change it hears of.
type recorder struct {
	mu      sync.Mutex
	added   []*Resource
	removed []*Resource
}

func (r *recorder) TableChanged(added, removed []*Resource) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.added = append(r.added, added...)
	r.removed = append(r.removed, removed...)
}

func TestTableChangeAddsAndRemovesInOneSwap(t *testing.T) {
	table := newTestTable()
	before := len(table.All())
	var rec recorder
	if got := table.Subscribe(&rec); len(got) != before {
		t.Fatalf("Subscribe returned %d resources, want %d", len(got), before)
	}
	v1, v2 := widget("widgets", "v1"), widget("widgets", "v2")
	if err := table.Change(nil, []*Resource{v1, v2}); err != nil {
		t.Fatal(err)
	}
	if r, ok := table.LookupGroupResource(v1.GroupResource()); !ok || r != v1 {
		t.Fatalf("LookupGroupResource = %v, want the first version added", r)
	}
	if r, ok := table.Lookup(v2.GroupVersionResource()); !ok || r != v2 {
		t.Fatalf("Lookup(v2) = %v, want v2", r)
	}
	if r, err := table.Parse("widgets"); err != nil || r != v1 {
		t.Fatalf("Parse(widgets) = %v, %v; want v1 (two versions of one resource are not ambiguous)", r, err)
	}
	if err := table.Change([]*Resource{v1, v2}, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := table.Lookup(v1.GroupVersionResource()); ok || len(table.All()) != before {
		t.Fatalf("after removal: %d resources, want %d", len(table.All()), before)
	}
	if len(rec.added) != 2 || len(rec.removed) != 2 {
		t.Fatalf("subscriber heard %d added, %d removed; want 2 and 2", len(rec.added), len(rec.removed))
	}
}

// An unsubscribed subscriber hears of no later change, and the others
// still do.
func TestTableUnsubscribeEndsOnlyThatSubscription(t *testing.T) {
	table := newTestTable()
	var gone, kept recorder
	table.Subscribe(&gone)
	table.Subscribe(&kept)
	table.Unsubscribe(&gone)
	table.Unsubscribe(&gone) // twice: nothing more happens
	if got := table.Subscribers(); got != 1 {
		t.Fatalf("Subscribers() = %d after one of two unsubscribed, want 1", got)
	}
	if err := table.Change(nil, []*Resource{widget("widgets", "v1")}); err != nil {
		t.Fatal(err)
	}
	if len(gone.added) != 0 || len(kept.added) != 1 {
		t.Fatalf("the unsubscribed heard %d additions, the other %d; want 0 and 1", len(gone.added), len(kept.added))
	}
}

func TestTableChangeThatFailsChangesNothing(t *testing.T) {
	table := newTestTable()
	before := len(table.All())
	other := widget("widgets", "v1")
	other.Prefix = "/registry/elsewhere/widgets"
	err := table.Change(nil, []*Resource{widget("widgets", "v1"), widget("widgets", "v1")})
	if err == nil {
		t.Fatal("adding one version twice: got no error")
	}
	if err := table.Change(nil, []*Resource{widget("widgets", "v1"), func() *Resource { r := widget("widgets", "v2"); r.Prefix = other.Prefix; return r }()}); err == nil {
		t.Fatal("two versions of one resource at two prefixes: got no error")
	}
	if got := len(table.All()); got != before {
		t.Fatalf("after failed changes: %d resources, want %d", got, before)
	}
}

// Readers never see a half-made change: each snapshot holds both versions
// of a resource or neither. Run with -race.
func TestTableReadersSeeWholeSnapshotsWhileWritersChange(t *testing.T) {
	table := newTestTable()
	var rec recorder
	table.Subscribe(&rec)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 4)
	for range 4 { // readers
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := 0
				for _, r := range table.All() {
					if r.GroupVersion.Group == "example.com" {
						n++
					}
				}
				if n%2 != 0 {
					errs <- fmt.Errorf("a snapshot held %d example.com resources, want an even number", n)
					return
				}
				table.Lookup(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"})
			}
		}()
	}
	for i := range 200 {
		plural := fmt.Sprintf("widget%ds", i%5)
		pair := []*Resource{widget(plural, "v1"), widget(plural, "v2")}
		if err := table.Change(nil, pair); err != nil {
			t.Fatal(err)
		}
		if err := table.Change(pair, nil); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(rec.added) != 400 || len(rec.removed) != 400 {
		t.Fatalf("subscriber heard %d added, %d removed; want 400 and 400", len(rec.added), len(rec.removed))
	}
}
