package registry

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// resultBufferSize is how many events may wait for a slow consumer (as
// upstream's etcd watcher).
const resultBufferSize = 100

// Watch streams the changes under the resource's (and namespace's) key
// prefix straight from one etcd watch:
//
//	Watch(prefix, WithRev(start+1), WithPrevKV, WithProgressNotify)
//
// The start revision: resourceVersion "N" streams every change after N.
// "" and "0" (or sendInitialEvents=true) first list the current state and
// send it as synthetic ADDED events, then stream the changes after the list's
// revision, so that nothing falls between the list and the watch. With
// sendInitialEvents and allowWatchBookmarks, a BOOKMARK annotated
// "k8s.io/initial-events-end" marks the end of the initial state.
//
// Each etcd event becomes a watch event: a PUT that created the key is
// ADDED, any other PUT is MODIFIED, a DELETE is DELETED and carries the last
// state stamped with the deletion's revision. With selectors, the old and new
// states decide: an object that stops matching is DELETED, one that starts
// matching is ADDED. A start revision etcd has compacted gives one ERROR
// event (410 Expired), then the stream ends.
func (s *Store) Watch(ctx context.Context, res *Resource, namespace string, opts ListOptions) (watch.Interface, error) {
	if err := validateListOptions(opts, true); err != nil {
		return nil, err
	}
	pred, err := newPredicate(res, opts.LabelSelector, opts.FieldSelector)
	if err != nil {
		return nil, err
	}
	rev, err := resourceVersionToRevision(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	sendInitial := opts.ResourceVersion == "" || opts.ResourceVersion == "0"
	if opts.SendInitialEvents != nil {
		sendInitial = *opts.SendInitialEvents
	}
	w := &etcdWatch{
		store: s, res: res, pred: pred, keyPrefix: keyPrefixFor(res, namespace),
		bookmarks: opts.AllowWatchBookmarks, startRev: rev,
		result: make(chan watch.Event, resultBufferSize), done: make(chan struct{}),
	}
	// Read the initial state (or the current revision) before returning, so
	// that a resourceVersion etcd has not reached fails the request itself.
	var initial []*mvccpb.KeyValue
	switch {
	case sendInitial:
		q := &listQuery{res: res, pred: pred, keyPrefix: w.keyPrefix, fromKey: w.keyPrefix,
			serializable: opts.ResourceVersion == "0", minRev: rev}
		resp, err := s.readPage(ctx, q, 0)
		if err != nil {
			return nil, err
		}
		initial, w.startRev = resp.Kvs, resp.Header.Revision
		w.endBookmark = opts.SendInitialEvents != nil && *opts.SendInitialEvents && opts.AllowWatchBookmarks
	case rev == 0:
		if w.startRev, err = s.currentRevisionOf(ctx, res); err != nil {
			return nil, storageError(err)
		}
	}
	w.ctx, w.cancel = context.WithCancel(ctx)
	s.log.Debug("watch started", "prefix", w.keyPrefix, "after", w.startRev, "initial", len(initial))
	// The watch's only goroutine: it owns w.result and closes it, and ends
	// when w.ctx does (Stop, or the caller's ctx) or etcd ends the watch.
	go w.run(initial)
	return w, nil
}

// etcdWatch is one client's WATCH, served by one etcd watch.
type etcdWatch struct {
	store       *Store
	res         *Resource
	pred        *predicate
	keyPrefix   string
	startRev    int64 // events after this revision are streamed
	bookmarks   bool  // progress notifications become BOOKMARK events
	endBookmark bool  // send the initial-events-end BOOKMARK

	// ctx ends the watch; cancel is called by Stop, and by run on its way out.
	ctx    context.Context
	cancel context.CancelFunc
	// result carries events to the consumer. Only run sends on it, and run
	// closes it when it returns.
	result chan watch.Event
	// done is closed by run after result, once the goroutine has ended.
	done chan struct{}
}

var _ watch.Interface = (*etcdWatch)(nil)

// Stop ends the watch; the result channel is closed soon after, even if no
// one reads from it. Stop may be called more than once.
func (w *etcdWatch) Stop() { w.cancel() }

// ResultChan returns the stream of events.
func (w *etcdWatch) ResultChan() <-chan watch.Event { return w.result }

// run is the watch's goroutine: it sends the initial state, then relays the
// etcd watch until ctx ends, etcd closes the watch, or an error is sent.
func (w *etcdWatch) run(initial []*mvccpb.KeyValue) {
	defer close(w.done)
	defer close(w.result)
	defer w.cancel()
	defer w.store.log.Debug("watch ended", "prefix", w.keyPrefix)

	for _, kv := range initial {
		obj, err := w.store.decode(w.res, kv.Value, kv.ModRevision)
		if err != nil {
			w.sendError(err)
			return
		}
		if w.pred.matches(obj) && !w.send(watch.Event{Type: watch.Added, Object: obj}) {
			return
		}
	}
	if w.endBookmark && !w.sendBookmark(w.startRev, true) {
		return
	}

	opts := []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithRev(w.startRev + 1), clientv3.WithPrevKV()}
	if w.bookmarks {
		opts = append(opts, clientv3.WithProgressNotify())
	}
	// WithRequireLeader: a member cut off from its cluster ends the watch
	// instead of silently streaming nothing.
	for resp := range w.store.client.Watch(clientv3.WithRequireLeader(w.ctx), w.keyPrefix, opts...) {
		if resp.CompactRevision != 0 {
			w.sendError(watchTooOld(w.startRev, resp.CompactRevision))
			return
		}
		if err := resp.Err(); err != nil {
			if w.ctx.Err() == nil {
				w.sendError(storageError(err))
			}
			return
		}
		if resp.IsProgressNotify() {
			if w.bookmarks && !w.sendBookmark(resp.Header.Revision, false) {
				return
			}
			continue
		}
		for _, e := range resp.Events {
			ev, ok, err := w.transform(e)
			if err != nil {
				w.sendError(err)
				return
			}
			if ok && !w.send(ev) {
				return
			}
		}
	}
}

// transform turns one etcd event into the watch event this client should
// see, if any.
func (w *etcdWatch) transform(e *clientv3.Event) (watch.Event, bool, error) {
	rev := e.Kv.ModRevision
	if e.Type == clientv3.EventTypeDelete {
		if e.PrevKv == nil {
			return watch.Event{}, false, apierrors.NewInternalError(fmt.Errorf("etcd event received with PrevKv=nil (key=%q)", e.Kv.Key))
		}
		// The last state, stamped with the revision of its deletion.
		old, err := w.store.decode(w.res, e.PrevKv.Value, rev)
		if err != nil {
			return watch.Event{}, false, err
		}
		_, ok := w.pred.selectChange(watch.Deleted, old, nil)
		return watch.Event{Type: watch.Deleted, Object: old}, ok, nil
	}
	cur, err := w.store.decode(w.res, e.Kv.Value, rev)
	if err != nil {
		return watch.Event{}, false, err
	}
	typ := watch.Modified
	if e.IsCreate() {
		typ = watch.Added
	}
	// The previous state is decoded only when a selector must judge it,
	// stamped with this change's revision: a watcher for which the object
	// stops matching gets it as DELETED.
	var old runtime.Object
	if typ == watch.Modified && !w.pred.empty() {
		if e.PrevKv == nil {
			return watch.Event{}, false, apierrors.NewInternalError(fmt.Errorf("etcd event received with PrevKv=nil (key=%q)", e.Kv.Key))
		}
		if old, err = w.store.decode(w.res, e.PrevKv.Value, rev); err != nil {
			return watch.Event{}, false, err
		}
	}
	switch seen, ok := w.pred.selectChange(typ, cur, old); {
	case !ok:
		return watch.Event{}, false, nil
	case seen == watch.Deleted:
		return watch.Event{Type: watch.Deleted, Object: old}, true, nil
	default:
		return watch.Event{Type: seen, Object: cur}, true, nil
	}
}

// send delivers ev unless the watch is stopped first; false means stop.
func (w *etcdWatch) send(ev watch.Event) bool {
	select {
	case w.result <- ev:
		return true
	case <-w.ctx.Done():
		return false
	}
}

// sendBookmark sends an empty object of the kind whose resourceVersion is
// rev, annotated as the end of the initial events when initialEnd is set.
func (w *etcdWatch) sendBookmark(rev int64, initialEnd bool) bool {
	obj := w.res.New()
	if err := stampObject(obj, rev); err != nil {
		w.sendError(apierrors.NewInternalError(err))
		return false
	}
	if initialEnd {
		m, err := meta.Accessor(obj)
		if err != nil {
			w.sendError(apierrors.NewInternalError(err))
			return false
		}
		m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	return w.send(watch.Event{Type: watch.Bookmark, Object: obj})
}

// sendError sends an ERROR event carrying err as a *metav1.Status, the form
// client-go's reflector understands (410 Expired -> relist).
func (w *etcdWatch) sendError(err error) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		status = apierrors.NewInternalError(err)
	}
	s := status.Status()
	w.send(watch.Event{Type: watch.Error, Object: &s})
}

// RequestWatchProgress asks etcd for a progress notification on every
// watch of the gRPC stream that ctx's metadata selects: each such watch
// with allowWatchBookmarks then gets a BOOKMARK at etcd's current revision,
// once it has delivered everything up to it. Watch opens its etcd watch
// with clientv3.WithRequireLeader(ctx), so passing the same ctx (or one with
// the same gRPC metadata) here reaches that watch. etcd answers only when
// every watch of the stream is in sync; callers retry while they need it.
// The watch cache uses this to learn that it is current when its resource
// has no writes (upstream's RequestWatchProgress).
func (s *Store) RequestWatchProgress(ctx context.Context) error {
	return storageError(s.client.RequestProgress(clientv3.WithRequireLeader(ctx)))
}
