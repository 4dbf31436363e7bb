package apiserver

import (
	"net/http"
	"net/http/pprof"
	"strings"
)

// profilingPath is where Go's profiles are served, as upstream's
// --profiling serves them: go tool pprof http://127.0.0.1:8080/debug/pprof/profile
const profilingPath = "/debug/pprof"

// profilingHandler serves the runtime's profiles: the index and named
// profiles (heap, goroutine, ...) under /debug/pprof/, and the CPU profile,
// execution trace, command line and symbol lookup at their own paths.
func profilingHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch strings.TrimPrefix(req.URL.Path, profilingPath) {
		case "/cmdline":
			pprof.Cmdline(w, req)
		case "/profile":
			pprof.Profile(w, req)
		case "/symbol":
			pprof.Symbol(w, req)
		case "/trace":
			pprof.Trace(w, req)
		case "":
			http.Redirect(w, req, profilingPath+"/", http.StatusMovedPermanently)
		default:
			pprof.Index(w, req)
		}
	})
}
