package apiserver

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"minicp/registry"
)

// fakeStore is an in-memory registry.Interface for the HTTP layer's unit
// tests: one global revision counter, objects keyed like etcd keys, and
// watches fed by every write. It follows the Interface's contract
// (resourceVersion = revision of the last write, compare-and-swap on
// Update) without any of etcd's machinery.
type fakeStore struct {
	// mu guards rev, objects, watchers, interfere and lastUpdate.
	mu       sync.Mutex
	rev      int64
	objects  map[string]runtime.Object
	watchers map[*fakeWatcher]bool
	// interfere, when set, runs once inside the next Update between
	// tryUpdate and the compare-and-swap: a concurrent writer.
	interfere func(key string)

	// lastUpdate is the UpdateOptions of the latest Update call.
	lastUpdate registry.UpdateOptions
	// createEntered, when set, receives once a Create has started; Create
	// then waits for createGate to be closed (an in-flight write).
	createEntered chan struct{}
	createGate    chan struct{}

	// panicOn makes the named method panic ("Get", "List", ...).
	panicOn string
	// blockGets makes Get wait until its context ends, ignoring nothing.
	blockGets bool
	// stoppedWatches counts watches whose Stop was called.
	stoppedWatches atomic.Int64
}

var _ registry.Interface = (*fakeStore)(nil)

func newFakeStore() *fakeStore {
	return &fakeStore{rev: 1, objects: map[string]runtime.Object{}, watchers: map[*fakeWatcher]bool{}}
}

func fakeKey(res *registry.Resource, namespace, name string) string {
	if res.Namespaced {
		return res.Prefix + "/" + namespace + "/" + name
	}
	return res.Prefix + "/" + name
}

func (f *fakeStore) Get(ctx context.Context, res *registry.Resource, namespace, name string, _ registry.GetOptions) (runtime.Object, error) {
	f.maybePanic("Get")
	if f.blockGets {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	obj, ok := f.objects[fakeKey(res, namespace, name)]
	if !ok {
		return nil, apierrors.NewNotFound(res.GroupVersionResource().GroupResource(), name)
	}
	return obj.DeepCopyObject(), nil
}

func (f *fakeStore) List(_ context.Context, res *registry.Resource, namespace string, opts registry.ListOptions) (runtime.Object, error) {
	f.maybePanic("List")
	f.mu.Lock()
	defer f.mu.Unlock()
	var items []runtime.Object
	for key, obj := range f.objects {
		if f.matches(res, namespace, opts, key, obj) {
			items = append(items, obj.DeepCopyObject())
		}
	}
	list := res.NewList()
	if err := meta.SetList(list, items); err != nil {
		return nil, err
	}
	listMeta, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	listMeta.SetResourceVersion(strconv.FormatInt(f.rev, 10))
	return list, nil
}

// matches reports whether obj, stored under key, is selected.
func (f *fakeStore) matches(res *registry.Resource, namespace string, opts registry.ListOptions, key string, obj runtime.Object) bool {
	prefix := res.Prefix + "/"
	if namespace != "" {
		prefix += namespace + "/"
	}
	if len(key) < len(prefix) || key[:len(prefix)] != prefix {
		return false
	}
	m, _ := meta.Accessor(obj)
	if opts.LabelSelector != nil && !opts.LabelSelector.Matches(labels.Set(m.GetLabels())) {
		return false
	}
	if opts.FieldSelector != nil {
		if name, ok := opts.FieldSelector.RequiresExactMatch("metadata.name"); ok && name != m.GetName() {
			return false
		}
	}
	return true
}

func (f *fakeStore) Create(_ context.Context, res *registry.Resource, namespace string, obj runtime.Object, opts registry.WriteOptions) (runtime.Object, error) {
	f.maybePanic("Create")
	if f.createEntered != nil {
		f.createEntered <- struct{}{}
		<-f.createGate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	key := fakeKey(res, namespace, m.GetName())
	if _, exists := f.objects[key]; exists {
		return nil, apierrors.NewAlreadyExists(res.GroupVersionResource().GroupResource(), m.GetName())
	}
	if m.GetResourceVersion() != "" {
		return nil, apierrors.NewBadRequest("resourceVersion should not be set on objects to be created")
	}
	m.SetUID(types.UID(fmt.Sprintf("uid-%d", f.rev+1)))
	m.SetCreationTimestamp(metav1.NewTime(time.Unix(1700000000, 0)))
	if opts.DryRun {
		return obj, nil
	}
	f.rev++
	m.SetResourceVersion(strconv.FormatInt(f.rev, 10))
	f.objects[key] = obj.DeepCopyObject()
	f.notifyLocked(key, watch.Added, obj)
	return obj, nil
}

func (f *fakeStore) Update(_ context.Context, res *registry.Resource, namespace, name string, opts registry.UpdateOptions, tryUpdate registry.UpdateFunc) (runtime.Object, bool, error) {
	f.maybePanic("Update")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastUpdate = opts
	key := fakeKey(res, namespace, name)
	for {
		current, exists := f.objects[key]
		var currentRV string
		var input runtime.Object
		if exists {
			input = current.DeepCopyObject()
			m, _ := meta.Accessor(current)
			currentRV = m.GetResourceVersion()
		} else if !res.AllowCreateOnUpdate {
			return nil, false, apierrors.NewNotFound(res.GroupVersionResource().GroupResource(), name)
		}
		updated, err := tryUpdate(input)
		if err != nil {
			return nil, false, err
		}
		if interfere := f.interfere; interfere != nil {
			f.interfere = nil
			interfere(key)
			m, _ := meta.Accessor(f.objects[key])
			currentRV = m.GetResourceVersion()
		}
		m, err := meta.Accessor(updated)
		if err != nil {
			return nil, false, err
		}
		if rv := m.GetResourceVersion(); rv != "" && rv != currentRV {
			return nil, false, apierrors.NewConflict(res.GroupVersionResource().GroupResource(), name,
				fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
		}
		if rv := m.GetResourceVersion(); rv == "" && currentRV != "" && f.changedSince(key, input) {
			continue // a concurrent write slipped in: retry on the fresh object
		}
		if opts.DryRun {
			return updated, !exists, nil
		}
		f.rev++
		m.SetResourceVersion(strconv.FormatInt(f.rev, 10))
		f.objects[key] = updated.DeepCopyObject()
		event := watch.Modified
		if !exists {
			event = watch.Added
		}
		f.notifyLocked(key, event, updated)
		return updated, !exists, nil
	}
}

// changedSince reports whether the object under key is no longer the one
// tryUpdate was given (its resourceVersion moved).
func (f *fakeStore) changedSince(key string, seen runtime.Object) bool {
	if seen == nil {
		return false
	}
	a, _ := meta.Accessor(f.objects[key])
	b, _ := meta.Accessor(seen)
	return a.GetResourceVersion() != b.GetResourceVersion()
}

// bumpLocked is a concurrent writer: it rewrites the object under key
// with a new revision. The caller holds mu.
func (f *fakeStore) bumpLocked(key string) {
	obj := f.objects[key].DeepCopyObject()
	m, _ := meta.Accessor(obj)
	f.rev++
	m.SetResourceVersion(strconv.FormatInt(f.rev, 10))
	l := m.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l["bumped"] = "true"
	m.SetLabels(l)
	f.objects[key] = obj
	f.notifyLocked(key, watch.Modified, obj)
}

func (f *fakeStore) Delete(_ context.Context, res *registry.Resource, namespace, name string, opts registry.DeleteOptions) (runtime.Object, error) {
	f.maybePanic("Delete")
	f.mu.Lock()
	defer f.mu.Unlock()
	key := fakeKey(res, namespace, name)
	obj, ok := f.objects[key]
	if !ok {
		return nil, apierrors.NewNotFound(res.GroupVersionResource().GroupResource(), name)
	}
	m, _ := meta.Accessor(obj)
	if p := opts.Preconditions; p != nil {
		if p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion() {
			return nil, apierrors.NewConflict(res.GroupVersionResource().GroupResource(), name,
				fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, m.GetResourceVersion()))
		}
	}
	if opts.DryRun {
		return obj.DeepCopyObject(), nil
	}
	delete(f.objects, key)
	f.rev++
	deleted := obj.DeepCopyObject()
	dm, _ := meta.Accessor(deleted)
	dm.SetResourceVersion(strconv.FormatInt(f.rev, 10))
	f.notifyLocked(key, watch.Deleted, deleted)
	return deleted, nil
}

func (f *fakeStore) Watch(ctx context.Context, res *registry.Resource, namespace string, opts registry.ListOptions) (watch.Interface, error) {
	f.maybePanic("Watch")
	f.mu.Lock()
	defer f.mu.Unlock()
	w := &fakeWatcher{store: f, res: res, namespace: namespace, opts: opts, result: make(chan watch.Event, 100), done: make(chan struct{})}
	f.watchers[w] = true
	// The watch ends with its context, as the Interface promises.
	go func() {
		select {
		case <-ctx.Done():
			w.Stop()
		case <-w.done:
		}
	}()
	return w, nil
}

// notifyLocked sends an event to every matching watch. The caller holds mu.
func (f *fakeStore) notifyLocked(key string, typ watch.EventType, obj runtime.Object) {
	for w := range f.watchers {
		if f.matches(w.res, w.namespace, w.opts, key, obj) {
			w.send(watch.Event{Type: typ, Object: obj.DeepCopyObject()})
		}
	}
}

// sendToWatches delivers an arbitrary event (e.g. an ERROR) to every watch.
func (f *fakeStore) sendToWatches(ev watch.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for w := range f.watchers {
		w.send(ev)
	}
}

func (f *fakeStore) openWatchers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.watchers)
}

func (f *fakeStore) maybePanic(method string) {
	if f.panicOn == method {
		panic("fake store: " + method + " panics on purpose")
	}
}

// fakeWatcher is one watch on the fake store.
type fakeWatcher struct {
	store     *fakeStore
	res       *registry.Resource
	namespace string
	opts      registry.ListOptions
	// result carries events to the apiserver; buffered so writers rarely
	// block. Sends happen under store.mu; Stop closes it under store.mu.
	result chan watch.Event
	// done is closed by Stop (once), first, to unblock a pending send.
	done     chan struct{}
	stopOnce sync.Once
}

func (w *fakeWatcher) send(ev watch.Event) {
	select {
	case w.result <- ev:
	case <-w.done:
	}
}

func (w *fakeWatcher) Stop() {
	w.stopOnce.Do(func() {
		close(w.done)
		w.store.mu.Lock()
		delete(w.store.watchers, w)
		close(w.result)
		w.store.mu.Unlock()
		w.store.stoppedWatches.Add(1)
	})
}

func (w *fakeWatcher) ResultChan() <-chan watch.Event { return w.result }
