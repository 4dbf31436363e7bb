package watchcache

// Explaining a watch start (M6 and M8): how a WATCH
// from a given resourceVersion would begin, worked out by the same
// planWatch and window lookup that Watch uses, without registering a
// watcher. The live page (/ui/) and the labs ask it through
// GET /debug/watchcache/<resource>/explain?resourceVersion=N.

import (
	"context"
	"fmt"
	"net/http"

	"minicp/registry"
)

// Outcomes of ExplainWatch.
const (
	// OutcomeReplay: the watch starts at once, first sending the window's
	// events after the resourceVersion, then live ones.
	OutcomeReplay = "replay"
	// OutcomeExpired: the watch gets one ERROR event, 410 Expired.
	OutcomeExpired = "expired"
	// OutcomeWait: the resourceVersion is ahead of the cache; the watch
	// sends nothing until a change after it arrives.
	OutcomeWait = "wait"
	// OutcomeState: "" or "0": the current state as ADDED events first.
	OutcomeState = "state"
	// OutcomeNotReady: the cache is (re)listing; the watch waits for it.
	OutcomeNotReady = "not-ready"
	// OutcomeEtcd: the resource is not cached; etcd serves the watch.
	OutcomeEtcd = "etcd"
)

// WatchExplanation is how a WATCH with ?resourceVersion=ResourceVersion
// (no sendInitialEvents) would start at this moment.
type WatchExplanation struct {
	Resource        string `json:"resource"`
	ResourceVersion string `json:"resourceVersion"`
	Outcome         string `json:"outcome"`
	// Why says it in plain words, with the numbers that decided it.
	Why string `json:"why"`
	// Replayed is the number of window events the watch would send first.
	Replayed int `json:"replayed,omitempty"`
	// Status is the error the watch would get (410 for OutcomeExpired),
	// exactly as the client would see it.
	Status *StatusSummary `json:"status,omitempty"`
	// The cache's state the decision was made on.
	CacheResourceVersion int64  `json:"cacheResourceVersion,omitempty"`
	Window               Window `json:"window"`
}

// StatusSummary is the code, reason and message of a Kubernetes Status.
type StatusSummary struct {
	Code    int32  `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// ExplainWatch says how a watch of resource (as /debug/watchcache names
// it: "pods", "leases.coordination.k8s.io") from resourceVersion would
// start now. An unknown resource or an unparseable resourceVersion is a
// 400/404 Status error, as the watch itself would get.
func (c *Cache) ExplainWatch(ctx context.Context, resource, resourceVersion string) (WatchExplanation, error) {
	res, err := c.resources.Parse(resource)
	if err != nil {
		return WatchExplanation{}, notFound(err.Error())
	}
	ex := WatchExplanation{Resource: groupResource(res), ResourceVersion: resourceVersion}
	rc := c.cacheFor(res)
	if rc == nil {
		ex.Outcome = OutcomeEtcd
		ex.Why = "this resource is not cached (--watch-cache off, or a window of 0): the watch goes to etcd, " +
			"which replays its history after the resourceVersion if etcd has not compacted it, and answers 410 Expired if it has"
		return ex, nil
	}
	plan, err := rc.planWatch(ctx, registry.ListOptions{ResourceVersion: resourceVersion})
	if err != nil {
		return WatchExplanation{}, err
	}
	rc.mu.RLock()
	defer rc.mu.RUnlock()
	rc.explainLocked(&ex, plan)
	return ex, nil
}

// explainLocked fills in the outcome of plan on the cache as it is; the
// caller holds rc.mu for reading. It follows register (watch.go) case by
// case.
func (rc *resourceCache) explainLocked(ex *WatchExplanation, plan watchPlan) {
	ex.CacheResourceVersion = rc.rv
	ex.Window = Window{
		Capacity: rc.window.capacity(), Events: rc.window.len(), OldestResourceVersion: rc.window.floor,
		FirstEvent: rc.window.oldest(), LastEvent: rc.window.newest(),
	}
	switch {
	case !rc.ready:
		ex.Outcome = OutcomeNotReady
		ex.Why = "the cache is listing the resource from etcd (first start or re-initialisation): the watch waits until it is ready, then the rules below apply"
	case plan.initial && plan.waitFor > 0:
		ex.Outcome = OutcomeState
		ex.Why = fmt.Sprintf(`resourceVersion "" is a consistent read: the watch waits until the cache has reached etcd's current revision %d (it is at %d), `+
			"sends the %d objects it holds as ADDED events, then every change", plan.waitFor, rc.rv, rc.objects.len())
	case plan.initial:
		ex.Outcome = OutcomeState
		ex.Why = fmt.Sprintf(`resourceVersion "0" means "any state": the watch sends the %d objects the cache holds now (at %d) as ADDED events, then every change, without asking etcd`,
			rc.objects.len(), rc.rv)
	default:
		rc.explainFromLocked(ex, plan.from)
	}
}

// explainFromLocked explains a watch that sends the changes after from.
func (rc *resourceCache) explainFromLocked(ex *WatchExplanation, from int64) {
	events, ok := rc.window.after(from)
	switch {
	case !ok:
		err := registry.WatchTooOld(from, rc.window.floor+1)
		st := err.Status()
		ex.Outcome = OutcomeExpired
		ex.Status = &StatusSummary{Code: st.Code, Reason: string(st.Reason), Message: st.Message}
		ex.Why = fmt.Sprintf("%d is older than the window, which starts at %d: the cache holds every change after %d, but not what happened between %d and %d "+
			"(a window starts where the cache last listed from etcd, and moves up as old events are evicted). The client must list again (a relist) and watch from the list's resourceVersion",
			from, rc.window.floor, rc.window.floor, from, rc.window.floor)
	case from > rc.rv:
		ex.Outcome = OutcomeWait
		ex.Why = fmt.Sprintf("%d is ahead of the cache, which has applied every change up to %d: the watch starts now and sends nothing until a change after %d arrives",
			from, rc.rv, from)
	default:
		ex.Outcome = OutcomeReplay
		ex.Replayed = len(events)
		ex.Why = fmt.Sprintf("%d is inside the window (every change after %d is held, up to %d): the watch replays the %d held change(s) after %d from memory, then live ones; etcd is not asked",
			from, rc.window.floor, rc.rv, len(events), from)
	}
}

// serveExplain answers GET /debug/watchcache/<resource>/explain?resourceVersion=N.
func (c *Cache) serveExplain(w http.ResponseWriter, req *http.Request, name string) {
	ex, err := c.ExplainWatch(req.Context(), name, req.URL.Query().Get("resourceVersion"))
	if err != nil {
		writeStatus(w, asStatus(err))
		return
	}
	writeJSON(w, http.StatusOK, ex)
}
