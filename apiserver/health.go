package apiserver

import (
	"context"
	"net/http"
)

// newHealthHandler serves /healthz, /livez and /readyz.
func newHealthHandler(ready func(context.Context) error) http.Handler {
	return http.NotFoundHandler()
}
