package apiserver

// Where did the time go (M9 and M15)? Every request
// carries a reqtrace.Trace in its context, started here; the phases are
// marked where they run: authentication in filters/authn.go, admission in
// admission/admission.go, storage around the registry calls in rest.go,
// etcd in the registry's client, cache wait in the watch cache, encoding
// in respond.go. A request slower than
// Config.SlowRequestThreshold logs them in one line:
//
//	level=WARN msg="slow request" verb=LIST path=/api/v1/pods code=200 total=2.004s
//	  authentication=1µs admission=0s storage=150µs cache_wait=0s etcd=2.003s
//	  encoding=40µs etcd_requests=1 other=300µs
//
// and, with --phases-header (or -v=2), every response carries the same
// breakdown in the Minicp-Phases header, which `kubectl -v=8` prints.

import (
	"log/slog"
	"net/http"
	"time"

	"minicp/reqtrace"
)

// PhasesHeader is the response header carrying a request's phases.
const PhasesHeader = "Minicp-Phases"

// startTrace puts a new trace in req's context.
func startTrace(req *http.Request) (*http.Request, *reqtrace.Trace) {
	tr := reqtrace.New()
	return req.WithContext(reqtrace.WithTrace(req.Context(), tr)), tr
}

// phasesHeaderOn reports whether responses carry the Minicp-Phases header.
func (s *Server) phasesHeaderOn() bool { return s.cfg.PhasesHeader || s.cfg.Verbosity >= 2 }

// logIfSlow logs one line with the phases of a finished request that took
// at least the threshold. Watches are long by design and never logged; a
// request that hit its deadline is logged with the phase it is still in.
func (s *Server) logIfSlow(req *http.Request, verb string, code int, elapsed time.Duration, tr *reqtrace.Trace) {
	threshold := s.cfg.SlowRequestThreshold
	if threshold <= 0 || elapsed < threshold || verb == "WATCH" {
		return
	}
	attrs := []slog.Attr{slog.String("verb", verb), slog.String("path", req.URL.RequestURI()), slog.Int("code", code)}
	attrs = append(attrs, tr.Snapshot().Attrs()...)
	s.log.LogAttrs(req.Context(), slog.LevelWarn, "slow request", attrs...)
}
