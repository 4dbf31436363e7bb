package apiserver

import (
	"net/http"
	"sync/atomic"

	"minicp/registry"
)

// liveDiscovery serves the discovery documents of the table's current
// set of resources. The documents are still computed once per state, not
// per request: every change of the table (a custom resource served or
// withdrawn) builds a new discoveryHandler, under the table's writer lock,
// and swaps it in whole; a request reads whichever is current.
type liveDiscovery struct {
	table *registry.Table
	// cur is the handler of the table's current state.
	cur atomic.Pointer[http.Handler]
}

var _ registry.TableSubscriber = (*liveDiscovery)(nil)

// newLiveDiscovery serves table's documents and follows its changes.
func newLiveDiscovery(table *registry.Table) *liveDiscovery {
	d := &liveDiscovery{table: table}
	d.set(table.Subscribe(d))
	return d
}

func (d *liveDiscovery) set(resources []*registry.Resource) {
	h := newDiscoveryHandler(resources)
	d.cur.Store(&h)
}

// TableChanged implements registry.TableSubscriber.
func (d *liveDiscovery) TableChanged(_, _ []*registry.Resource) { d.set(d.table.All()) }

func (d *liveDiscovery) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*d.cur.Load()).ServeHTTP(w, r)
}
