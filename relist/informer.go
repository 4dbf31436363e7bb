package relist

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// Counts are the requests one informer made, as its reflector made them.
type Counts struct {
	// Lists are LIST requests (the reflector's fallback, or its only way
	// when watch-list is off).
	Lists int64
	// WatchLists are watches with sendInitialEvents: the streaming LIST
	// informers start with and relist with.
	WatchLists int64
	// Resumes are watches resuming from a resourceVersion, without an
	// initial state.
	Resumes int64
	// Expired counts 410 answers: a resumed watch or a list at a
	// resourceVersion the server no longer has.
	Expired int64
}

// Relists is how many full states the informer fetched.
func (c Counts) Relists() int64 { return c.Lists + c.WatchLists }

// Sub returns c - o, field by field.
func (c Counts) Sub(o Counts) Counts {
	return Counts{Lists: c.Lists - o.Lists, WatchLists: c.WatchLists - o.WatchLists, Resumes: c.Resumes - o.Resumes, Expired: c.Expired - o.Expired}
}

// Request is one request the informer's reflector made, for a log.
type Request struct {
	// Kind is "LIST", "WATCH-LIST" (watch with sendInitialEvents),
	// "WATCH" (resume), or, for an ERROR event on a watch stream,
	// "EXPIRED" (410) or "ERROR".
	Kind            string
	ResourceVersion string
	Err             error
}

func (r Request) String() string {
	rv := r.ResourceVersion
	if rv == "" {
		rv = `""`
	}
	s := fmt.Sprintf("%s from resourceVersion %s", r.Kind, rv)
	if r.Err != nil {
		s += ": " + r.Err.Error()
	}
	return s
}

// Informer is a client-go shared informer on ConfigMaps of one namespace
// whose ListerWatcher counts the requests the reflector makes: how often it
// lists, streams a full state, resumes a watch, or is told 410 Gone.
type Informer struct {
	Name      string
	namespace string
	informer  cache.SharedIndexInformer
	// onRequest, if set, sees every request as it is made; it is called
	// from the reflector's goroutine.
	onRequest func(Request)

	// counters, written by the reflector's goroutine, read by anyone.
	lists, watchLists, resumes, expired atomic.Int64

	cancel context.CancelFunc
	// done is closed when the informer's Run returns.
	done chan struct{}
}

// InformerOptions adjust NewInformer.
type InformerOptions struct {
	// OnRequest sees every request the reflector makes.
	OnRequest func(Request)
	// Handler receives the informer's notifications, if set.
	Handler cache.ResourceEventHandler
	// OnWatchError sees every error that ends a list or watch attempt
	// (the reflector then backs off and retries); client-go logs them
	// otherwise.
	OnWatchError func(error)
}

// NewInformer builds an informer on the ConfigMaps of namespace through
// cfg, with its own HTTP connections. Start runs it.
func NewInformer(name string, cfg *rest.Config, namespace string, opts InformerOptions) (*Informer, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS = -1 // no client-side rate limit: measure the server
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("informer %s: %w", name, err)
	}
	inf := &Informer{Name: name, namespace: namespace, onRequest: opts.OnRequest, done: make(chan struct{})}
	cms := cs.CoreV1().ConfigMaps(namespace)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			inf.lists.Add(1)
			list, err := cms.List(ctx, o)
			inf.record("LIST", o.ResourceVersion, err)
			return list, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			kind := "WATCH"
			if o.SendInitialEvents != nil && *o.SendInitialEvents {
				kind = "WATCH-LIST"
				inf.watchLists.Add(1)
			} else {
				inf.resumes.Add(1)
			}
			w, err := cms.Watch(ctx, o)
			inf.record(kind, o.ResourceVersion, err)
			if err != nil {
				return nil, err
			}
			return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
				if ev.Type == watch.Error {
					err := apierrors.FromObject(ev.Object)
					kind := "ERROR"
					if isExpired(err) {
						kind = "EXPIRED"
					}
					inf.record(kind, o.ResourceVersion, err)
				}
				return ev, true
			}), nil
		},
	}
	inf.informer = cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
	if opts.OnWatchError != nil {
		onErr := opts.OnWatchError
		err := inf.informer.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) { onErr(err) })
		if err != nil {
			return nil, fmt.Errorf("informer %s: %w", name, err)
		}
	}
	if opts.Handler != nil {
		if _, err := inf.informer.AddEventHandler(opts.Handler); err != nil {
			return nil, fmt.Errorf("informer %s: %w", name, err)
		}
	}
	return inf, nil
}

// record counts a 410 and passes the request on to onRequest.
func (inf *Informer) record(kind, rv string, err error) {
	if isExpired(err) {
		inf.expired.Add(1)
	}
	if inf.onRequest != nil {
		inf.onRequest(Request{Kind: kind, ResourceVersion: rv, Err: err})
	}
}

// isExpired reports whether err is the server's "your resourceVersion is
// too old" (410 Expired, or Gone from older servers).
func isExpired(err error) bool {
	return err != nil && (apierrors.IsResourceExpired(err) || apierrors.IsGone(err))
}

// Start runs the informer until ctx ends or Stop is called.
func (inf *Informer) Start(ctx context.Context) {
	ctx, inf.cancel = context.WithCancel(ctx)
	// The informer's own goroutine (reflector and processor); it ends
	// when ctx does, and closes done.
	go func() {
		defer close(inf.done)
		inf.informer.RunWithContext(ctx)
	}()
}

// Stop ends the informer and waits for it.
func (inf *Informer) Stop() {
	if inf.cancel != nil {
		inf.cancel()
		<-inf.done
	}
}

// HasSynced reports whether the first full state has arrived.
func (inf *Informer) HasSynced() bool { return inf.informer.HasSynced() }

// LastSyncResourceVersion is the resourceVersion the informer has caught
// up to.
func (inf *Informer) LastSyncResourceVersion() string {
	return inf.informer.LastSyncResourceVersion()
}

// Counts returns the requests made so far.
func (inf *Informer) Counts() Counts {
	return Counts{Lists: inf.lists.Load(), WatchLists: inf.watchLists.Load(), Resumes: inf.resumes.Load(), Expired: inf.expired.Load()}
}

// Contents returns name -> resourceVersion of every ConfigMap in the
// informer's store.
func (inf *Informer) Contents() map[string]string {
	out := map[string]string{}
	for _, obj := range inf.informer.GetStore().List() {
		cm := obj.(*corev1.ConfigMap)
		out[cm.Name] = cm.ResourceVersion
	}
	return out
}

// Holds reports whether the store holds every name in want at exactly its
// resourceVersion.
func (inf *Informer) Holds(want map[string]string) bool {
	for name, rv := range want {
		obj, ok, err := inf.informer.GetStore().GetByKey(inf.namespace + "/" + name)
		if err != nil || !ok || obj.(*corev1.ConfigMap).ResourceVersion != rv {
			return false
		}
	}
	return true
}

// WaitSynced waits for the informer's first full state.
func (inf *Informer) WaitSynced(ctx context.Context) error {
	if !cache.WaitForCacheSync(ctx.Done(), inf.informer.HasSynced) {
		return fmt.Errorf("informer %s did not sync: %w", inf.Name, context.Cause(ctx))
	}
	return nil
}

// FormatContents prints a store as "a@7 b@9", sorted by name.
func FormatContents(contents map[string]string) string {
	names := make([]string, 0, len(contents))
	for n := range contents {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "@" + contents[n]
	}
	return strings.Join(parts, " ")
}

// pollEvery is how often waits in this package look at a condition.
const pollEvery = 5 * time.Millisecond

// waitFor polls cond until it holds or ctx ends.
func waitFor(ctx context.Context, cond func() bool) error {
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-t.C:
		}
	}
	return nil
}
