package apiserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Health endpoints answer the two questions a supervisor asks, in
// upstream's format so the same probes and scripts work:
//
//   - /livez (and the older /healthz): is the process able to serve at all?
//     Only the trivial "ping" check, so a slow or lost etcd never gets a
//     healthy apiserver restarted.
//   - /readyz: should clients be sent here? "ping" plus "etcd", which calls
//     the ready function with a short deadline.
//
// Each check is also served alone (/readyz/etcd, /livez/ping). ?verbose
// lists every check, ?exclude=<name> skips one. A failing endpoint answers
// 500 and names the failed check without its reason, which goes to the log,
// unless the error has a PublicReason() string method: then that reason is
// shown (minicp's etcd check uses it to name a raised etcd alarm).

// readyCheckTimeout bounds one call of the ready function.
const readyCheckTimeout = 2 * time.Second

// ReadyCheck is a named check /readyz runs besides "ping" and "etcd".
type ReadyCheck struct {
	Name  string
	Check func(context.Context) error
}

// AddReadyCheck adds a check to /readyz (and serves it alone at
// /readyz/<name>). Call it before Start.
func (s *Server) AddReadyCheck(c ReadyCheck) {
	s.readyChecks = append(s.readyChecks, c)
	s.health = newHealthHandler(s.ready, s.readyChecks...)
}

// healthCheck is one named check of a health endpoint.
type healthCheck struct {
	name  string
	check func(*http.Request) error
}

// healthEndpoint is /livez, /healthz or /readyz with its checks.
type healthEndpoint struct {
	name   string
	checks []healthCheck
}

// newHealthHandler serves /healthz, /livez and /readyz. ready reports
// whether storage can serve requests; a nil ready means there is none to
// wait for.
// The extra checks are added to /readyz after "etcd".
func newHealthHandler(ready func(context.Context) error, extra ...ReadyCheck) http.Handler {
	ping := healthCheck{name: "ping", check: func(*http.Request) error { return nil }}
	readyChecks := []healthCheck{ping}
	if ready != nil {
		extra = append([]ReadyCheck{{Name: "etcd", Check: ready}}, extra...)
	}
	for _, c := range extra {
		readyChecks = append(readyChecks, healthCheck{name: c.Name, check: func(r *http.Request) error {
			ctx, cancel := context.WithTimeout(r.Context(), readyCheckTimeout)
			defer cancel()
			return c.Check(ctx)
		}})
	}
	mux := http.NewServeMux()
	for _, ep := range []healthEndpoint{
		{name: "healthz", checks: []healthCheck{ping}},
		{name: "livez", checks: []healthCheck{ping}},
		{name: "readyz", checks: readyChecks},
	} {
		mux.Handle("/"+ep.name, ep)
		for _, c := range ep.checks {
			mux.Handle("/"+ep.name+"/"+c.name, c)
		}
	}
	return mux
}

// ServeHTTP runs every check of the endpoint not excluded by the query.
func (ep healthEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	excluded := map[string]bool{}
	for _, name := range r.URL.Query()["exclude"] {
		excluded[strings.TrimSpace(name)] = true
	}
	var report bytes.Buffer
	var failed []string
	for _, c := range ep.checks {
		if excluded[c.name] {
			fmt.Fprintf(&report, "[+]%s excluded: ok\n", c.name)
			continue
		}
		if err := c.check(r); err != nil {
			slog.Debug("health check failed", "endpoint", ep.name, "check", c.name, "err", err)
			fmt.Fprintf(&report, "[-]%s failed: %s\n", c.name, publicReason(err))
			failed = append(failed, c.name)
			continue
		}
		fmt.Fprintf(&report, "[+]%s ok\n", c.name)
	}
	setPlainText(w)
	if len(failed) > 0 {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(&report, "%s check failed\n", ep.name)
		_, _ = report.WriteTo(w) // the client went away; nothing to do
		return
	}
	if _, verbose := r.URL.Query()["verbose"]; !verbose {
		_, _ = fmt.Fprint(w, "ok") // the client went away; nothing to do
		return
	}
	fmt.Fprintf(&report, "%s check passed\n", ep.name)
	_, _ = report.WriteTo(w) // the client went away; nothing to do
}

// ServeHTTP runs one check alone and, unlike the endpoint, shows why it failed.
func (c healthCheck) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setPlainText(w)
	if err := c.check(r); err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = fmt.Fprintf(w, "internal server error: %v\n", err) // the client went away; nothing to do
		return
	}
	_, _ = fmt.Fprint(w, "ok") // the client went away; nothing to do
}

// publicReason is what a failed check's line says: "reason withheld", as
// upstream, unless the error offers a reason meant to be shown.
func publicReason(err error) string {
	var public interface{ PublicReason() string }
	if errors.As(err, &public) {
		return public.PublicReason()
	}
	return "reason withheld"
}

func setPlainText(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
}
