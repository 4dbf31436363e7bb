package ui

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"minicp/watchcache"
)

const (
	defaultTapeLength = 50
	maxTapeLength     = 1000
)

// EventsView is what GET /debug/events answers: the newest watch events
// across resources, newest first, read from the watch cache's windows
// (?limit=N, default 50). They are the events a watch from an older
// resourceVersion would be replayed; resources that are not cached have
// none here.
type EventsView struct {
	Events []watchcache.RecentEvent `json:"events"`
	// Message says why the tape is empty when the cache is off.
	Message string `json:"message,omitempty"`
}

func (v *Views) serveEvents(w http.ResponseWriter, req *http.Request) {
	limit, bad := intParam(req, "limit", defaultTapeLength)
	if bad != nil {
		writeStatus(w, bad)
		return
	}
	if limit < 1 || limit > maxTapeLength {
		writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("limit must be between 1 and %d, got %d", maxTapeLength, limit)))
		return
	}
	view := EventsView{Events: []watchcache.RecentEvent{}}
	if v.cfg.Cache != nil {
		view.Events = append(view.Events, v.cfg.Cache.RecentEvents(limit)...)
	}
	// Only an empty tape needs the reason (Status asks etcd its revision).
	if len(view.Events) == 0 && (v.cfg.Cache == nil || !v.cfg.Cache.Status(req.Context()).Enabled) {
		view.Message = "the watch cache is off (--watch-cache=false): the tape reads the cache's windows, so it stays empty"
	}
	writeJSON(w, view)
}
