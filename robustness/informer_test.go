//go:build linux

package robustness

import (
	"fmt"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// notice is one notification an informer's handler received.
type notice struct {
	kind      string   // add, update, delete
	old       objState // update only
	obj       objState
	tombstone bool // a delete the informer inferred from a relist
}

// informerWatcher is a client-go shared informer on the test namespace's
// ConfigMaps whose handler records every notification. client-go decides
// everything else: watch-list or LIST then WATCH, relists after 410,
// backoff while minicp is down.
type informerWatcher struct {
	name     string
	factory  informers.SharedInformerFactory
	informer cache.SharedIndexInformer

	// mu guards notices: the informer's handler goroutine appends.
	mu      sync.Mutex
	notices []notice
}

func newInformerWatcher(name string, cs kubernetes.Interface) (*informerWatcher, error) {
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(testNamespace))
	w := &informerWatcher{name: name, factory: f, informer: f.Core().V1().ConfigMaps().Informer()}
	_, err := w.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { w.record(notice{kind: "add", obj: cmState(obj)}) },
		UpdateFunc: func(oldObj, newObj any) {
			w.record(notice{kind: "update", old: cmState(oldObj), obj: cmState(newObj)})
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				w.record(notice{kind: "delete", obj: cmState(tomb.Obj), tombstone: true})
				return
			}
			w.record(notice{kind: "delete", obj: cmState(obj)})
		},
	})
	return w, err
}

func (w *informerWatcher) record(n notice) {
	w.mu.Lock()
	w.notices = append(w.notices, n)
	w.mu.Unlock()
}

func cmState(obj any) objState {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return objState{name: fmt.Sprintf("not a ConfigMap: %T", obj)}
	}
	rv, _ := strconv.ParseInt(cm.ResourceVersion, 10, 64)
	return objState{name: cm.Name, rv: rv, value: cm.Data[valueKey]}
}

// store is the informer's current view.
func (w *informerWatcher) store() map[string]objState {
	out := map[string]objState{}
	for _, obj := range w.informer.GetStore().List() {
		st := cmState(obj)
		out[st.name] = st
	}
	return out
}

// checkNotices compares an informer's notifications with etcd's history.
// An informer may skip versions across a relist, so the check is per
// object: every add and update shows a version etcd wrote; an update's old
// object is the one notified last; versions never go back (an update to
// the same version is a relist's resync, counted but allowed); a delete
// carries the object's last value at the deletion's revision, or, inferred
// at a relist (a tombstone), the last version notified, deleted in etcd
// after it.
func checkNotices(name string, h *history, notices []notice) (v verdict, resyncs int) {
	last := map[string]objState{} // per object, the last version notified and not deleted
	lastRV := map[string]int64{}  // per object, the last revision notified, deletes included
	for i, n := range notices {
		v.checked++
		where := fmt.Sprintf("%s notice %d (%s %s at %d)", name, i, n.kind, n.obj.name, n.obj.rv)
		prev, had := last[n.obj.name]
		switch {
		case n.kind == "update" && (!had || n.old != prev):
			v.fail("%s: old object %+v, but the last notified was %+v", where, n.old, prev)
		case n.kind == "add" && had:
			v.fail("%s: added again while %+v was not deleted", where, prev)
		case n.tombstone && (!had || n.obj != prev || !h.deletedAfter(n.obj.name, n.obj.rv)):
			v.fail("%s: a tombstone must carry the last version notified (%+v) and etcd must have deleted it after", where, prev)
		}
		if n.kind == "update" && n.obj == n.old {
			resyncs++
		} else if n.obj.rv <= lastRV[n.obj.name] && !n.tombstone {
			v.fail("%s: resourceVersion went back or repeated after %d", where, lastRV[n.obj.name])
		}
		if !n.tombstone {
			checkVersion(&v, where, h, n)
		}
		lastRV[n.obj.name] = max(lastRV[n.obj.name], n.obj.rv)
		if n.kind == "delete" {
			delete(last, n.obj.name)
		} else {
			last[n.obj.name] = n.obj
		}
	}
	return v, resyncs
}

// checkVersion checks that etcd wrote the notified version: a put of that
// value at that revision, or, for a delete, a deletion at that revision
// whose last value is the one notified.
func checkVersion(v *verdict, where string, h *history, n notice) {
	ev, ok := h.version(n.obj.name, n.obj.rv)
	switch {
	case !ok:
		v.fail("%s: etcd wrote nothing to %s at %d", where, n.obj.name, n.obj.rv)
	case ev.del != (n.kind == "delete"):
		v.fail("%s: etcd's change at %d is %s", where, n.obj.rv, describeEvent(ev))
	case ev.value != n.obj.value:
		v.fail("%s: value %q, etcd's change at %d is %s", where, n.obj.value, n.obj.rv, describeEvent(ev))
	}
}
