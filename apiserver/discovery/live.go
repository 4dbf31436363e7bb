package discovery

import (
	"net/http"
	"sync/atomic"

	"minicp/registry"
)

// Handler serves the discovery documents of the table's current set of
// resources, and the create-only ones it was given. The documents are still computed once per state, not
// per request: every change of the table (a custom resource served or
// withdrawn) builds a new discoveryHandler, under the table's writer lock,
// and swaps it in whole; a request reads whichever is current.
type Handler struct {
	table *registry.Table
	extra []CreateOnly
	// cur is the handler of the table's current state.
	cur atomic.Pointer[http.Handler]
}

var _ registry.TableSubscriber = (*Handler)(nil)

// New serves table's documents and follows its changes until the caller
// unsubscribes it from table (registry.Table.Unsubscribe); extra are
// listed beside the table's resources.
func New(table *registry.Table, extra []CreateOnly) *Handler {
	d := &Handler{table: table, extra: extra}
	d.set(table.Subscribe(d))
	return d
}

func (d *Handler) set(resources []*registry.Resource) {
	h := newDiscoveryHandler(resources, d.extra)
	d.cur.Store(&h)
}

// TableChanged implements registry.TableSubscriber.
func (d *Handler) TableChanged(_, _ []*registry.Resource) { d.set(d.table.All()) }

// ServeHTTP answers /api, /apis and below them, and /version.
func (d *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*d.cur.Load()).ServeHTTP(w, r)
}
