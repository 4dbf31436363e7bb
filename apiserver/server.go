package apiserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"minicp/apiserver/admission"
	"minicp/apiserver/discovery"
	"minicp/apiserver/filters"
	"minicp/apiserver/openapi"
	"minicp/registry"
)

// Server is minicp's HTTP front end: the Kubernetes REST API over a
// registry.Interface, plus discovery, OpenAPI, health and metrics.
type Server struct {
	cfg Config
	// resources is the table the server serves: routing, discovery,
	// OpenAPI, tables. Its set changes when custom resources come and go
	// (registry.Table): routing looks a resource up once per request,
	// discovery follows every change (discovery.Handler), OpenAPI is
	// rebuilt on the first request after one (openapi.Handler).
	resources *registry.Table
	store     registry.Interface
	log       *slog.Logger
	metrics   *metrics
	// metricsPage serves /metrics.
	metricsPage http.Handler

	// discovery and openapi follow the table (registry.Table.Subscribe)
	// until Shutdown.
	discovery *discovery.Handler
	openapi   *openapi.Handler
	health    http.Handler
	// ready and readyChecks are what /readyz runs (health.go); written
	// only before Start.
	ready       func(context.Context) error
	readyChecks []ReadyCheck
	// filters decide whether a request is served at all (Host, Origin,
	// Content-Type, authentication, in-flight limit, authorization);
	// login hands out the live page's session cookies they accept.
	// Set in New and Start, read-only while serving.
	filters *filters.Chain
	login   *loginManager
	// timeouts run every request but a watch under the request deadline,
	// and know which handlers are still running for Shutdown.
	timeouts *filters.Timeouts
	// admission is the admission chain: the built-in plugins Config
	// leaves on, then those added with AddAdmissionPlugin. Written only
	// before Start, read-only afterwards.
	admission admission.Chain
	// extra holds endpoints other packages add with Handle, such as
	// /debug/watchcache. Written only before Start, read-only afterwards.
	extra map[string]http.Handler

	// stopping is the server-wide context that Shutdown cancels (through
	// endWatches) first thing: every watch handler derives its context
	// from it too, so that it ends its stream and its registry watch.
	stopping   context.Context
	endWatches context.CancelFunc
	// conns follows the connections net/http holds, so that Shutdown can
	// close those that carry no request (shutdown.go).
	conns *connStates
	// openWatches counts watch streams being served.
	openWatches atomic.Int64
	// mu guards httpServer and listener, set by Start and read by URL and
	// Shutdown.
	mu         sync.Mutex
	httpServer *http.Server
	listener   net.Listener
}

// New builds a server of the resources of table over store. ready is the
// readiness check /readyz runs (typically: etcd answers a quorum read);
// nil means always ready.
func New(cfg Config, table *registry.Table, store registry.Interface, ready func(context.Context) error) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if store == nil || table == nil {
		return nil, errors.New("apiserver: a registry and its resource table are required")
	}
	WarmUp() // the type converter of the first write (fieldmanager.go)
	if ready == nil {
		ready = func(context.Context) error { return nil }
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	var metricsReg MetricsRegistry = prometheus.NewRegistry()
	if cfg.Metrics != nil {
		metricsReg = cfg.Metrics
	}
	tokens, err := filters.NewTokenAuthenticator(cfg.Tokens, cfg.TokenAuthFile)
	if err != nil {
		return nil, err
	}
	var chain admission.Chain
	if !hasString(cfg.DisableAdmissionPlugins, admission.NamespaceLifecycleName) {
		chain = append(chain, admission.NewNamespaceLifecycle(store, table))
	}
	s := &Server{
		cfg:         cfg,
		resources:   table,
		store:       store,
		log:         log,
		metrics:     newMetrics(metricsReg),
		metricsPage: metricsHandler(metricsReg),
		discovery:   discovery.New(table, reviewDiscovery()),
		openapi:     openapi.New(table),
		health:      newHealthHandler(ready),
		admission:   chain,
		extra:       map[string]http.Handler{},
		conns:       newConnStates(),
		ready:       ready,
		login:       newLoginManager(false),
	}
	s.filters = &filters.Chain{
		Hosts: filters.HostCheck{BindAddress: cfg.BindAddress, Allowed: map[string]bool{}},
		Authn: filters.Authenticator{
			Tokens:    tokens,
			Session:   s.login.sessionUser,
			Anonymous: cfg.AnonymousAuth,
			Public:    append(slices.Clone(filters.PublicInfoPaths), loginPath),
		},
		Inflight: filters.NewInflightLimiter(cfg.MaxRequestsInflight, cfg.MaxMutatingRequestsInflight),
	}
	s.timeouts = &filters.Timeouts{Limit: cfg.RequestTimeout, Log: log, WriteError: writeError}
	s.stopping, s.endWatches = context.WithCancel(context.Background())
	if cfg.Profiling {
		s.Handle(profilingPath, s.endsAtShutdown(profilingHandler()))
	}
	return s, nil
}

// AddAdmissionPlugin appends p to the admission chain, after the built-in
// plugins. Call it before Start.
func (s *Server) AddAdmissionPlugin(p admission.Plugin) { s.admission = append(s.admission, p) }

// Handle serves h at path and below it (path/...), next to the Kubernetes
// API: debug pages of other packages use it. Call it before Start; the
// requests get the same deadline, panic recovery and metrics as the API.
func (s *Server) Handle(path string, h http.Handler) { s.extra[path] = h }

// extraHandler finds the handler added with Handle for path, if any.
func (s *Server) extraHandler(path string) http.Handler {
	for root, h := range s.extra {
		if isUnder(path, root) {
			return h
		}
	}
	return nil
}

// Handler returns the server's full handler, e.g. for httptest.NewServer.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// Start listens on BindAddress:Port and serves in a goroutine until
// Shutdown. With Port 0 the kernel picks a free port; URL reports it.
// listen.go says what is served on the port and what bounds connections.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.httpServer != nil {
		return errors.New("apiserver: already started")
	}
	root, lns, startSplit, err := s.listeners()
	if err != nil {
		return err
	}
	s.login.secure = !s.cfg.plainHTTPAllowed()
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		ConnState:         s.conns.track,
	}
	// net/http calls this after it has closed the listeners, before it
	// waits for open requests (shutdown.go).
	srv.RegisterOnShutdown(s.stopLongRunning)
	s.httpServer, s.listener = srv, root
	// Each serving goroutine ends when Shutdown closes its listener.
	for _, ln := range lns {
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
				s.log.Error("apiserver stopped serving", "err", err)
			}
		}()
	}
	startSplit()
	s.log.Debug("apiserver listening", "url", s.urlLocked())
	return nil
}

// URL is the server's base URL, e.g. "https://127.0.0.1:8080" ("http://"
// without TLS); "" before Start.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.urlLocked()
}

func (s *Server) urlLocked() string {
	if s.listener == nil {
		return ""
	}
	if s.cfg.tlsEnabled() {
		return "https://" + s.hostPortLocked()
	}
	return "http://" + s.hostPortLocked()
}

// hostPortLocked is the listening address, with 127.0.0.1 for an
// unspecified bind address (0.0.0.0, ::): the address this machine's
// clients use, and one the serving certificate names.
func (s *Server) hostPortLocked() string {
	addr := s.listener.Addr().(*net.TCPAddr)
	if addr.IP.IsUnspecified() {
		return net.JoinHostPort("127.0.0.1", fmt.Sprint(addr.Port))
	}
	return addr.String()
}

// PlainURL is the plain-HTTP URL of the server on loopback ("" when only
// TLS is served): minicp's own clients and the live page use it.
func (s *Server) PlainURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listener == nil || !s.cfg.plainHTTPAllowed() {
		return ""
	}
	return "http://" + s.hostPortLocked()
}

// serveHTTP is the outermost handler: it works out what the request is,
// serves it with panics recovered, then records it in metrics and, at
// -v=2, in the log; a slow request logs its phases (trace.go).
func (s *Server) serveHTTP(w http.ResponseWriter, req *http.Request) {
	start := time.Now()
	req, tr := startTrace(req)
	info := parseRequestInfo(req)
	var res *registry.Resource
	if info.isResource {
		res, _ = s.lookupResource(info)
	}
	rec := &recorder{ResponseWriter: w}
	if s.phasesHeaderOn() {
		rec.beforeHeader = func(h http.Header) { h.Set(PhasesHeader, tr.Snapshot().String()) }
	}
	req, refused := s.filters.Check(req) // Host, Origin, Content-Type, authentication
	defer func() {
		elapsed := time.Since(start)
		group, version, resource, subresource := "", "", "", ""
		if res != nil { // unknown paths are not labelled by what they name
			group, version, resource, subresource = res.GroupVersion.Group, res.GroupVersion.Version, res.Name, info.subresource
		}
		s.metrics.observe(info.metricVerb(req), group, version, resource, subresource, info.metricScope(), rec.status(), elapsed)
		s.metrics.observeResponseSize(info.metricVerb(req), group, version, resource, subresource, info.metricScope(), rec.written)
		if s.cfg.Verbosity >= 2 {
			s.log.Info("request", "verb", info.metricVerb(req), "path", req.URL.RequestURI(), "code", rec.status(), "duration", elapsed)
		}
		s.logIfSlow(req, info.metricVerb(req), rec.status(), elapsed, tr)
	}()
	defer s.recoverPanic(rec, req)
	if refused != nil {
		writeError(rec, req, refused)
		return
	}
	release, err := s.filters.Admit(req, filters.Kind{LongRunning: isLongRunning(info, req.URL.Path), Mutating: isMutating(info)})
	if err != nil {
		writeError(rec, req, err)
		return
	}
	defer release()
	s.dispatch(rec, req, info, res)
}

// recoverPanic turns a panic in a handler into 500 InternalError (when the
// response has not started) and a log line with the stack. The client
// never sees a broken connection for it. http.ErrAbortHandler is net/http's
// way to abort a response on purpose and is passed on.
func (s *Server) recoverPanic(rec *recorder, req *http.Request) {
	r := recover()
	if r == nil {
		return
	}
	p, fromHandler := r.(filters.HandlerPanic)
	if !fromHandler {
		p = filters.HandlerPanic{Value: r, Stack: debug.Stack()}
	}
	if p.Value == http.ErrAbortHandler {
		panic(p.Value)
	}
	s.log.Error("panic serving request", "method", req.Method, "path", req.URL.Path, "panic", p.Value, "stack", string(p.Stack))
	if rec.wroteHeader {
		return // the response has started (a watch, or a 504): ending it is all that is left
	}
	writeError(rec, req, apierrors.NewInternalError(errors.New("this request caused the apiserver to panic; the apiserver's log has the details")))
}

// dispatch sends a request to the part of the server that owns its path.
// Everything but a watch runs under the request deadline.
func (s *Server) dispatch(w http.ResponseWriter, req *http.Request, info *requestInfo, res *registry.Resource) {
	if info.isResource && info.verb == verbWatch {
		s.serveREST(w, req, info, res)
		return
	}
	var h http.HandlerFunc
	path := req.URL.Path
	review, isReview := reviewFor(info)
	switch {
	case path == loginPath:
		h = s.serveLogin
	case isReview:
		h = func(w http.ResponseWriter, req *http.Request) { s.serveReview(w, req, review) }
	case info.isResource:
		h = func(w http.ResponseWriter, req *http.Request) { s.serveREST(w, req, info, res) }
	case path == "/metrics":
		h = s.metricsPage.ServeHTTP
	case isUnder(path, "/healthz") || isUnder(path, "/livez") || isUnder(path, "/readyz"):
		h = s.health.ServeHTTP
	case path == "/openapi/v2" || isUnder(path, "/openapi/v3"):
		h = s.openapi.ServeHTTP
	case path == "/version" || isUnder(path, "/api") || isUnder(path, "/apis"):
		h = s.discovery.ServeHTTP
	case s.extraHandler(path) != nil:
		h = s.extraHandler(path).ServeHTTP
	default:
		h = func(w http.ResponseWriter, req *http.Request) { writeError(w, req, notFound()) }
	}
	s.timeouts.Serve(w, req, h)
}

// isUnder reports whether path is root or below it.
func isUnder(path, root string) bool {
	return path == root || strings.HasPrefix(path, root+"/")
}

// recorder remembers the status code and the number of body bytes written
// through it, for metrics and logs, and passes Flush on for watch streams.
type recorder struct {
	http.ResponseWriter
	code        int
	wroteHeader bool
	written     int64
	// beforeHeader, if set, adds headers just before the status line is
	// written (the Minicp-Phases header).
	beforeHeader func(http.Header)
}

func (r *recorder) WriteHeader(code int) {
	if !r.wroteHeader {
		r.code, r.wroteHeader = code, true
		if r.beforeHeader != nil {
			r.beforeHeader(r.ResponseWriter.Header())
		}
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if !r.wroteHeader {
		r.WriteHeader(http.StatusOK)
	}
	n, err := r.ResponseWriter.Write(p)
	r.written += int64(n)
	return n, err
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// status is the code sent; 200 if the handler wrote nothing at all.
func (r *recorder) status() int {
	if !r.wroteHeader {
		return http.StatusOK
	}
	return r.code
}
