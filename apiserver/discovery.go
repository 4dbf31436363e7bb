package apiserver

import (
	"net/http"

	"minicp/registry"
)

// newDiscoveryHandler serves /api, /api/v1, /apis, /apis/<group>,
// /apis/<group>/<version> and /version for resources.
func newDiscoveryHandler(resources []*registry.Resource) http.Handler {
	return http.NotFoundHandler()
}
