package storagetest

import (
	"fmt"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"minicp/registry"
)

// The suite over every kind of the storage's table: each is created,
// read back at its resourceVersion, found at its etcd key (its
// descriptor's prefix, upstream's layout), listed, watched through an
// update and deleted. A kind whose strategy requires fields gets a valid
// object from samples; any other kind is tried with an object that has
// only a name, and is skipped, saying so, if its strategy refuses that.

// samples make valid objects of the kinds whose strategies require more
// than a name.
var samples = map[schema.GroupResource]func(name string) runtime.Object{
	{Resource: "pods"}: func(name string) runtime.Object { return newPod(name, "", nil) },
	{Resource: "events"}: func(name string) runtime.Object {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web", Namespace: ns}}
	},
	{Group: coordinationv1.GroupName, Resource: "leases"}: func(name string) runtime.Object {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}}
	},
}

// sample returns an object of res named name.
func sample(res *registry.Resource, name string) runtime.Object {
	if f, ok := samples[res.GroupResource()]; ok {
		return f(name)
	}
	obj := res.New()
	m, _ := meta.Accessor(obj)
	m.SetName(name)
	return obj
}

// runEveryKind runs the per-kind case for every resource of the table, on
// one storage.
func runEveryKind(t *testing.T, s *suite) {
	for _, res := range s.Resources.All() {
		t.Run(res.GroupResource().String(), func(t *testing.T) {
			k := *s
			k.t = t
			k.everyKind(res)
		})
	}
}

// everyKind creates, reads, lists, watches, updates and deletes one object
// of res.
func (s *suite) everyKind(res *registry.Resource) {
	t := s.t
	namespace := ""
	if res.Namespaced {
		namespace = ns
	}
	name := "conf-" + strings.ReplaceAll(res.SingularName, ".", "-")
	created, err := s.Storage.Create(s.ctx, res, namespace, sample(res, name), registry.WriteOptions{})
	if apierrors.IsInvalid(err) {
		t.Skipf("an object with only a name is not a valid %s (%v): give the suite a sample of it", res.Kind, err)
	}
	if err != nil {
		t.Fatalf("creating %s: %v", res.Kind, err)
	}
	createdRV := objectRV(t, created)

	// M2: stored at the descriptor's key, at the create's revision.
	key := registry.KeyFor(res, namespace, name)
	kv, err := s.Etcd.Get(s.ctx, key)
	if err != nil || len(kv.Kvs) != 1 {
		t.Fatalf("etcd key %s: %v (err %v), want the object", key, kv, err)
	}
	if kv.Kvs[0].ModRevision != createdRV {
		t.Errorf("key %s at mod revision %d, want the create's resourceVersion %d", key, kv.Kvs[0].ModRevision, createdRV)
	}
	got, err := s.Storage.Get(s.ctx, res, namespace, name, registry.GetOptions{ResourceVersion: itoa(createdRV)})
	if err != nil || objectRV(t, got) != createdRV {
		t.Fatalf("get at %d: %v (err %v)", createdRV, got, err)
	}
	list, err := s.Storage.List(s.ctx, res, namespace, registry.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if names := listedNames(t, list); !strings.Contains(names, name) {
		t.Errorf("list has %s, want %s in it", names, name)
	}

	w, err := s.Storage.Watch(s.ctx, res, namespace, registry.ListOptions{ResourceVersion: itoa(createdRV)})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	updated, _, err := s.Storage.Update(s.ctx, res, namespace, name, registry.UpdateOptions{}, func(cur runtime.Object) (runtime.Object, error) {
		m, err := meta.Accessor(cur)
		if err != nil {
			return nil, err
		}
		m.SetLabels(map[string]string{"conformance": "updated"})
		return cur, nil
	})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if m := s.expect(w, watch.Modified, name); m.GetResourceVersion() != itoa(objectRV(t, updated)) || m.GetLabels()["conformance"] != "updated" {
		t.Errorf("MODIFIED at %s with labels %v, want %d with the update's label", m.GetResourceVersion(), m.GetLabels(), objectRV(t, updated))
	}
	s.deleteAndExpect(w, res, namespace, name)
}

// deleteAndExpect deletes the object and reads what the watch says: DELETED,
// or MODIFIED when the kind's deletion takes more than one step (a
// namespace becomes Terminating; an object waits for its finalizers).
func (s *suite) deleteAndExpect(w watch.Interface, res *registry.Resource, namespace, name string) {
	t := s.t
	if _, err := s.Storage.Delete(s.ctx, res, namespace, name, registry.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	ev := s.next(w)
	switch ev.Type {
	case watch.Deleted:
		resp, err := s.Etcd.Get(s.ctx, registry.KeyFor(res, namespace, name), clientv3.WithCountOnly())
		if err != nil || resp.Count != 0 {
			t.Errorf("after DELETED the key is still in etcd (count %d, err %v)", resp.Count, err)
		}
	case watch.Modified:
		if m, err := meta.Accessor(ev.Object); err != nil || m.GetDeletionTimestamp() == nil {
			t.Errorf("a delete that keeps the object must stamp deletionTimestamp; got %v", ev.Object)
		}
	default:
		t.Errorf("after delete got %s, want DELETED (or MODIFIED with a deletionTimestamp)", ev.Type)
	}
}

func objectRV(t *testing.T, obj runtime.Object) int64 {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	return rv(t, m.GetResourceVersion())
}

func listedNames(t *testing.T, list runtime.Object) string {
	t.Helper()
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(items))
	for i, item := range items {
		m, _ := meta.Accessor(item)
		names[i] = m.GetName()
	}
	return fmt.Sprint(names)
}
