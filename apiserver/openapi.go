package apiserver

import (
	"net/http"

	"minicp/registry"
)

// newOpenAPIHandler serves /openapi/v2, /openapi/v3 and /openapi/v3/<gv>.
func newOpenAPIHandler(resources []*registry.Resource) http.Handler {
	return http.NotFoundHandler()
}
