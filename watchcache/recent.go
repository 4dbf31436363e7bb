package watchcache

import (
	"cmp"
	"path"
	"slices"
	"strings"
)

// RecentEvent is one change held in a resource's window, as an event tape
// shows it.
type RecentEvent struct {
	Type            string `json:"type"` // ADDED, MODIFIED or DELETED
	Resource        string `json:"resource"`
	Namespace       string `json:"namespace,omitempty"`
	Name            string `json:"name"`
	ResourceVersion int64  `json:"resourceVersion"`
}

// RecentEvents returns the newest n changes held across every cached
// resource's window, newest first: the same events a watch starting from
// an older resourceVersion would be replayed. They come from memory; etcd
// is not asked. Resources that are not cached contribute nothing.
func (c *Cache) RecentEvents(n int) []RecentEvent {
	if n <= 0 {
		return nil
	}
	var all []RecentEvent
	for _, rc := range *c.caches.Load() {
		all = append(all, rc.recentEvents(n)...)
	}
	slices.SortFunc(all, func(a, b RecentEvent) int {
		return cmp.Or(cmp.Compare(b.ResourceVersion, a.ResourceVersion), strings.Compare(a.Resource, b.Resource))
	})
	return all[:min(n, len(all))]
}

// recentEvents returns the newest n events of the window, newest first.
func (c *resourceCache) recentEvents(n int) []RecentEvent {
	c.mu.RLock()
	defer c.mu.RUnlock()
	count := min(n, c.window.len())
	out := make([]RecentEvent, 0, count)
	for i := 0; i < count; i++ {
		e := c.window.at(c.window.end - 1 - uint64(i))
		out = append(out, RecentEvent{
			Type: string(e.typ), Resource: groupResource(c.res), Namespace: e.namespace,
			Name: path.Base(e.key), ResourceVersion: e.rv,
		})
	}
	return out
}
