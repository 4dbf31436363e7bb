package watchcache

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/registry"
)

// Status is what /debug/watchcache shows: the whole cache's settings and
// one ResourceStatus per resource.
type Status struct {
	Enabled                 bool   `json:"enabled"`
	ConsistentListFromCache bool   `json:"consistentListFromCache"`
	BookmarkFrequency       string `json:"bookmarkFrequency"`
	// EtcdRevision is etcd's current revision, read when the page was
	// asked for (0 if etcd did not answer).
	EtcdRevision int64            `json:"etcdRevision"`
	Resources    []ResourceStatus `json:"resources"`
}

// ResourceStatus is the state of one resource's cache.
type ResourceStatus struct {
	Resource string `json:"resource"`
	Cached   bool   `json:"cached"` // false: every request goes to etcd
	// CacheState is nil for a resource that is not cached.
	*CacheState
}

// CacheState is what a cached resource's cache holds and has done.
type CacheState struct {
	Ready  bool `json:"ready"`
	Paused bool `json:"paused"`
	// ResourceVersion is the revision up to which the cache has applied
	// every change of the resource; EtcdRevision is the current revision
	// of the etcd cluster holding it (its own with
	// --etcd-servers-overrides), read for this page; Lag is the difference (other
	// resources' writes, and progress notifications not asked for yet).
	ResourceVersion int64  `json:"resourceVersion"`
	EtcdRevision    int64  `json:"etcdRevision"`
	Lag             int64  `json:"lag"`
	Window          Window `json:"window"`
	Objects         int    `json:"objects"`
	Watchers        int    `json:"watchers"`
	// Counters since start: events from etcd, events dispatched, events
	// placed in watchers' buffers (events x interested watchers), objects
	// encoded (once per object and media type, as a watch frame or a list
	// item, whatever the number of watchers and LISTs),
	// watchers ended for not keeping up, GETs and LISTs answered from memory,
	// consistent LISTs that had to go to etcd, and successful lists of
	// the resource from etcd (the first, then one per re-initialisation).
	EventsReceived     int64  `json:"eventsReceived"`
	EventsDispatched   int64  `json:"eventsDispatched"`
	Deliveries         int64  `json:"deliveries"`
	Encodings          int64  `json:"encodings"`
	SlowWatchersEnded  int64  `json:"slowWatchersEnded"`
	GetsFromCache      int64  `json:"getsFromCache"`
	ListsFromCache     int64  `json:"listsFromCache"`
	ConsistentFallback int64  `json:"consistentListsFellBackToEtcd"`
	Initializations    int64  `json:"initializations"`
	Reinitializations  int64  `json:"reinitializations"`
	LastReinitReason   string `json:"lastReinitReason,omitempty"`
}

// Window describes the ring of recent events.
type Window struct {
	Capacity int `json:"capacity"`
	Events   int `json:"events"`
	// OldestResourceVersion is the oldest resourceVersion a watch may
	// start from: every change after it is in the window. Older ones get
	// 410 "too old resource version".
	OldestResourceVersion int64 `json:"oldestResourceVersion"`
	// First and last events held (0 when none).
	FirstEvent int64 `json:"firstEventResourceVersion"`
	LastEvent  int64 `json:"lastEventResourceVersion"`
}

// Status returns the cache's state now, one entry per served resource.
func (c *Cache) Status(ctx context.Context) Status {
	st := Status{
		Enabled:                 c.cfg.Enabled,
		ConsistentListFromCache: c.cfg.ConsistentListFromCache,
		BookmarkFrequency:       c.cfg.BookmarkFrequency.String(),
	}
	if rev, err := c.store.CurrentRevision(ctx); err == nil {
		st.EtcdRevision = rev
	}
	for _, res := range c.resources.All() {
		st.Resources = append(st.Resources, c.resourceStatus(ctx, res))
	}
	return st
}

// resourceStatus is one resource's entry of Status. A cached resource is
// compared with the revision of the etcd cluster holding it: the main
// one's, or its own with --etcd-servers-overrides.
func (c *Cache) resourceStatus(ctx context.Context, res *registry.Resource) ResourceStatus {
	rc := c.cacheFor(res)
	if rc == nil {
		return ResourceStatus{Resource: groupResource(res)}
	}
	rs := rc.status()
	if rev, err := c.store.CurrentRevisionOf(ctx, res); err == nil {
		rs.EtcdRevision = rev
	}
	if rs.Ready && rs.EtcdRevision > rs.ResourceVersion {
		rs.Lag = rs.EtcdRevision - rs.ResourceVersion
	}
	return rs
}

func (c *resourceCache) status() ResourceStatus {
	c.mu.RLock()
	st := &CacheState{
		Ready: c.ready, Paused: c.paused, ResourceVersion: c.rv, Objects: c.objects.len(), Watchers: c.watchers.count,
		Window: Window{
			Capacity: c.window.capacity(), Events: c.window.len(), OldestResourceVersion: c.window.floor,
			FirstEvent: c.window.oldest(), LastEvent: c.window.newest(),
		},
	}
	c.mu.RUnlock()
	st.EventsReceived = value(c.metrics.eventsReceived)
	st.EventsDispatched = value(c.metrics.eventsDispatched)
	st.Deliveries = c.stats.deliveries.Load()
	st.Encodings = c.stats.encodings.Load()
	st.SlowWatchersEnded = value(c.metrics.terminated)
	st.GetsFromCache = c.stats.getServed.Load()
	st.ListsFromCache = c.metrics.listsServed()
	st.ConsistentFallback = value(c.metrics.consistentFromEtcd)
	st.Initializations = value(c.metrics.initializations)
	st.Reinitializations = max(st.Initializations-1, 0)
	st.LastReinitReason, _ = c.stats.lastInitReason.Load().(string)
	return ResourceStatus{Resource: groupResource(c.res), Cached: true, CacheState: st}
}

// Handler serves /debug/watchcache (mount it there):
//
//	GET  /debug/watchcache                   every resource, as JSON
//	GET  /debug/watchcache/<resource>        one resource ("pods", "leases.coordination.k8s.io")
//	GET  /debug/watchcache/<resource>/explain?resourceVersion=N
//	                                         how a watch from N would start (explain.go)
//	POST /debug/watchcache/<resource>/pause  hold back its etcd feed (lab instrument)
//	POST /debug/watchcache/<resource>/resume
func (c *Cache) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		parts := strings.Split(strings.Trim(strings.TrimPrefix(req.URL.Path, "/debug/watchcache"), "/"), "/")
		switch {
		case len(parts) == 1 && parts[0] == "" && req.Method == http.MethodGet:
			writeJSON(w, http.StatusOK, c.Status(req.Context()))
		case len(parts) == 1 && req.Method == http.MethodGet:
			c.serveResource(w, req, parts[0])
		case len(parts) == 2 && req.Method == http.MethodGet && parts[1] == "explain":
			c.serveExplain(w, req, parts[0])
		case len(parts) == 2 && req.Method == http.MethodPost && (parts[1] == "pause" || parts[1] == "resume"):
			if err := c.setPaused(parts[0], parts[1] == "pause"); err != nil {
				writeStatus(w, apierrors.NewBadRequest(err.Error()))
				return
			}
			c.serveResource(w, req, parts[0])
		default:
			writeStatus(w, notFound("the server could not find the requested resource; try GET /debug/watchcache, GET /debug/watchcache/<resource>, GET /debug/watchcache/<resource>/explain?resourceVersion=N or POST /debug/watchcache/<resource>/pause|resume"))
		}
	})
}

func (c *Cache) serveResource(w http.ResponseWriter, req *http.Request, name string) {
	res, err := c.resources.Parse(name)
	if err != nil {
		writeStatus(w, notFound(err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, c.resourceStatus(req.Context(), res))
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// A failed write means the client went away.
	_ = enc.Encode(v)
}

func notFound(msg string) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound, Message: msg,
	}}
}

func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	st := err.Status()
	st.Kind, st.APIVersion = "Status", "v1"
	writeJSON(w, int(st.Code), st)
}
