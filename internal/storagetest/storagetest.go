package storagetest

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"minicp/internal/testsupport"
	"minicp/registry"
)

// What a factory must configure for the suite to hold.
const (
	// PodWindow is the most pod events the storage may keep for watches
	// (a watch cache's window); the suite writes more than this to push a
	// resourceVersion out of every storage's reach. The Store keeps none.
	PodWindow = 20
	// TooLargeWait is how long a read of a future resourceVersion may wait
	// before its 504 (upstream waits 3 s; the suite does not).
	TooLargeWait = 200 * time.Millisecond
	// BookmarkEvery is the most time between two BOOKMARKs of a watch with
	// allowWatchBookmarks (etcd's progress-notify interval for the Store,
	// the bookmark frequency for a cache). A BOOKMARK must arrive within
	// ten times this.
	BookmarkEvery = 200 * time.Millisecond
)

// Harness is one storage under test, on an etcd of its own, with the
// namespaces the suite uses not yet created.
type Harness struct {
	Storage registry.Interface
	// Resources is the table Storage serves.
	Resources *registry.Table
	// Etcd is the etcd the storage writes to, for compaction and revisions.
	Etcd *clientv3.Client
}

// Factory starts a fresh storage for one test; it stops it with t.Cleanup.
type Factory func(t *testing.T) Harness

type testCase struct {
	name string
	run  func(t *testing.T, s *suite)
}

// Run runs every conformance test against storages from newHarness, each
// test on a fresh one, then the per-kind test over every resource of the
// storage's table (kinds.go) on one more.
func Run(t *testing.T, newHarness Factory) {
	defer t.Run("EveryKindOfTheTableIsStoredAtItsKeyAndWatched", func(t *testing.T) {
		runEveryKind(t, newSuite(t, newHarness))
	})
	for _, tc := range append(getListCases, watchCases...) {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newSuite(t, newHarness))
		})
	}
}

// newSuite starts a storage for one test, with the suite's namespaces.
func newSuite(t *testing.T, newHarness Factory) *suite {
	s := &suite{t: t, Harness: newHarness(t)}
	s.pods = s.resource(corev1.SchemeGroupVersion.WithResource("pods"))
	s.configmaps = s.resource(corev1.SchemeGroupVersion.WithResource("configmaps"))
	s.namespaces = s.resource(corev1.SchemeGroupVersion.WithResource("namespaces"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	s.ctx = ctx
	s.createNamespace(ns)
	s.createNamespace(ns2)
	return s
}

// The suite's namespaces: the second is a prefix trap for the first.
const (
	ns  = "conf"
	ns2 = "conf2"
)

// eventTimeout bounds every wait for a watch event.
const eventTimeout = 10 * time.Second

// suite holds one test's storage and helpers.
type suite struct {
	Harness
	t   *testing.T
	ctx context.Context
	// The resources the suite writes, from the storage's table.
	pods, configmaps, namespaces *registry.Resource
}

// resource finds a resource of the storage's table.
func (s *suite) resource(gvr schema.GroupVersionResource) *registry.Resource {
	res, ok := s.Resources.Lookup(gvr)
	if !ok {
		s.t.Fatalf("the storage's table has no %s", gvr)
	}
	return res
}

func (s *suite) createNamespace(name string) {
	s.t.Helper()
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := s.Storage.Create(s.ctx, s.namespaces, "", obj, registry.WriteOptions{}); err != nil {
		s.t.Fatalf("creating namespace %s: %v", name, err)
	}
}

func newPod(name, node string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
	}
}

func (s *suite) createPodIn(namespace string, pod *corev1.Pod) *corev1.Pod {
	s.t.Helper()
	out, err := s.Storage.Create(s.ctx, s.pods, namespace, pod, registry.WriteOptions{})
	if err != nil {
		s.t.Fatalf("creating pod %s/%s: %v", namespace, pod.Name, err)
	}
	return out.(*corev1.Pod)
}

func (s *suite) createPod(name string) *corev1.Pod {
	s.t.Helper()
	return s.createPodIn(ns, newPod(name, "", map[string]string{"app": "web"}))
}

// setLabel updates pod name's label key to value, unconditionally.
func (s *suite) setLabel(name, key, value string) *corev1.Pod {
	s.t.Helper()
	out, _, err := s.Storage.Update(s.ctx, s.pods, ns, name, registry.UpdateOptions{}, func(cur runtime.Object) (runtime.Object, error) {
		pod := cur.(*corev1.Pod)
		if pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		pod.Labels[key] = value
		return pod, nil
	})
	if err != nil {
		s.t.Fatalf("updating pod %s: %v", name, err)
	}
	return out.(*corev1.Pod)
}

func (s *suite) deletePod(name string) *corev1.Pod {
	s.t.Helper()
	out, err := s.Storage.Delete(s.ctx, s.pods, ns, name, registry.DeleteOptions{})
	if err != nil {
		s.t.Fatalf("deleting pod %s: %v", name, err)
	}
	return out.(*corev1.Pod)
}

func (s *suite) listPods(namespace string, opts registry.ListOptions) (*corev1.PodList, error) {
	out, err := s.Storage.List(s.ctx, s.pods, namespace, opts)
	if err != nil {
		return nil, err
	}
	return out.(*corev1.PodList), nil
}

// mustListPods lists and fails the test on error.
func (s *suite) mustListPods(namespace string, opts registry.ListOptions) *corev1.PodList {
	s.t.Helper()
	list, err := s.listPods(namespace, opts)
	if err != nil {
		s.t.Fatalf("list %+v: %v", opts, err)
	}
	return list
}

// currentRevision is etcd's revision now.
func (s *suite) currentRevision() int64 {
	s.t.Helper()
	resp, err := s.Etcd.Get(s.ctx, "/registry", clientv3.WithCountOnly())
	if err != nil {
		s.t.Fatal(err)
	}
	return resp.Header.Revision
}

func (s *suite) watchPods(opts registry.ListOptions) watch.Interface {
	s.t.Helper()
	w, err := s.Storage.Watch(s.ctx, s.pods, ns, opts)
	if err != nil {
		s.t.Fatalf("watch %+v: %v", opts, err)
	}
	s.t.Cleanup(w.Stop)
	return w
}

// next returns the next event, with a cache's shared object unwrapped.
func (s *suite) next(w watch.Interface) watch.Event {
	s.t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			s.t.Fatal("watch closed, want an event")
		}
		if co, ok := ev.Object.(runtime.CacheableObject); ok {
			ev.Object = co.GetObject()
		}
		return ev
	case <-time.After(eventTimeout):
		s.t.Fatalf("no event within %v", eventTimeout)
	}
	return watch.Event{}
}

// expect reads the next event and checks its type and object name.
func (s *suite) expect(w watch.Interface, typ watch.EventType, name string) metav1.Object {
	s.t.Helper()
	ev := s.next(w)
	m, err := meta.Accessor(ev.Object)
	if err != nil {
		s.t.Fatalf("%s event carries %T: %v", ev.Type, ev.Object, err)
	}
	if ev.Type != typ || m.GetName() != name {
		s.t.Fatalf("got %s %q, want %s %q", ev.Type, m.GetName(), typ, name)
	}
	return m
}

func (s *suite) expectClosed(w watch.Interface) {
	s.t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if ok {
			s.t.Fatalf("got a %s event, want the watch closed", ev.Type)
		}
	case <-time.After(eventTimeout):
		s.t.Fatal("watch not closed")
	}
}

// eventually polls cond for up to eventTimeout.
func (s *suite) eventually(what string, cond func() bool) {
	s.t.Helper()
	testsupport.Eventually(s.t, eventTimeout, what, cond)
}

func rv(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q is not a revision", s)
	}
	return n
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func names(list *corev1.PodList) string {
	out := ""
	for i, p := range list.Items {
		if i > 0 {
			out += ","
		}
		out += p.Name
	}
	return out
}

func podName(i int) string { return fmt.Sprintf("p%02d", i) }
