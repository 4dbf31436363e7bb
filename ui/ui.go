package ui

import (
	"embed"
	"encoding/json"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"minicp/embedetcd"
	"minicp/registry"
	"minicp/watchcache"
)

// assets are the page's files: plain HTML, CSS and JavaScript, served as
// they are (no build step, nothing fetched from elsewhere).
//
//go:embed assets
var assets embed.FS

// Paths the views are served at.
const (
	PagePath   = "/ui"
	EtcdPath   = "/debug/etcd"
	NodesPath  = "/debug/nodes"
	EventsPath = "/debug/events"
	LoadPath   = "/debug/load"
)

// Config is what the views read. Only EtcdClient, Store and Resources are
// required.
type Config struct {
	// Resources is the table Store serves; the nodes view reads its
	// nodes and leases.
	Resources *registry.Table
	// Store reads Nodes and Leases with resourceVersion "0": from the
	// watch cache's memory when it is in front, so a page refresh costs
	// etcd nothing.
	Store registry.Interface
	// Cache feeds the event tape from its windows; nil: no tape.
	Cache *watchcache.Cache
	// EtcdClient reaches etcd: for the etcd status with --etcd-servers,
	// and for the etcd leases of Node Lease keys.
	EtcdClient *clientv3.Client
	// Cluster is the embedded etcd, read in-process; nil with --etcd-servers.
	Cluster *embedetcd.Cluster
	// Etcd is the embedded etcd's configuration, for the quota and the
	// lease checkpoint settings; ignored when Cluster is nil (an external
	// etcd v3.5 reports neither).
	Etcd embedetcd.Config
	// Others are the etcd clusters holding some resources apart from the
	// main one (events with --embedded-events-etcd or
	// --etcd-servers-overrides); each has its own revision axis.
	Others []OtherCluster
	// GracePeriod is the node lifecycle controller's
	// --node-monitor-grace-period; 0 when no controller runs here.
	GracePeriod time.Duration
	// Gatherer is where /debug/load reads metrics: the stack's registry
	// (and the process's, for etcd's own); nil means Prometheus' default
	// registry only.
	Gatherer prometheus.Gatherer
	// Clock is the views' time; nil means the real clock.
	Clock clock.PassiveClock
	// Logger receives failures of the views; nil discards.
	Logger *slog.Logger
}

// OtherCluster is an etcd cluster that holds some resources apart.
type OtherCluster struct {
	// Name says what it holds, e.g. "events".
	Name string
	// Resources are the resources it holds, as the watch cache names them.
	Resources []string
	// Client reaches it; Cluster is it when embedded (read in-process).
	Client  *clientv3.Client
	Cluster *embedetcd.Cluster
}

// Views serves the page and the JSON it reads.
type Views struct {
	cfg  Config
	load *loadSampler
	// nodes and leases are the resources the nodes view reads; nil when
	// the table lacks them (the view then answers 404).
	nodesRes, leasesRes *registry.Resource
}

// New returns the views over cfg.
func New(cfg Config) *Views {
	if cfg.Gatherer == nil {
		cfg.Gatherer = prometheus.DefaultGatherer
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	v := &Views{cfg: cfg, load: newLoadSampler(cfg.Gatherer, cfg.Clock)}
	if cfg.Resources != nil {
		v.nodesRes, _ = cfg.Resources.Lookup(corev1.SchemeGroupVersion.WithResource("nodes"))
		v.leasesRes, _ = cfg.Resources.Lookup(coordinationv1.SchemeGroupVersion.WithResource("leases"))
	}
	return v
}

// Mux is where the views are added: (*apiserver.Server).Handle, whose
// handlers serve their path and everything below it.
type Mux interface {
	Handle(path string, h http.Handler)
}

// Register adds the page at /ui/ and the JSON views under /debug to mux.
func (v *Views) Register(mux Mux) {
	mux.Handle(PagePath, v.PageHandler())
	mux.Handle(EtcdPath, getOnly(v.serveEtcd))
	mux.Handle(NodesPath, getOnly(v.serveNodes))
	mux.Handle(EventsPath, getOnly(v.serveEvents))
	mux.Handle(LoadPath, getOnly(v.serveLoad))
}

// PageHandler serves the page's files at /ui/ (and redirects /ui there).
func (v *Views) PageHandler() http.Handler {
	files, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the directory is embedded above; cannot happen
	}
	fileServer := http.StripPrefix(PagePath+"/", http.FileServer(http.FS(files)))
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == PagePath {
			http.Redirect(w, req, PagePath+"/", http.StatusMovedPermanently)
			return
		}
		// The page is small and changes with the binary: always revalidate.
		w.Header().Set("Cache-Control", "no-cache")
		fileServer.ServeHTTP(w, req)
	})
}

// getOnly answers anything but GET with 405, as a Status.
func getOnly(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet {
			writeStatus(w, &apierrors.StatusError{ErrStatus: metav1.Status{
				Status: metav1.StatusFailure, Code: http.StatusMethodNotAllowed, Reason: metav1.StatusReasonMethodNotAllowed,
				Message: req.Method + " is not supported at " + req.URL.Path + ": it is a read-only view, use GET",
			}})
			return
		}
		h(w, req)
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	// A failed write means the client went away.
	_ = json.NewEncoder(w).Encode(v)
}

// writeStatus writes err as a Kubernetes Status, with its code.
func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	st := err.Status()
	st.Kind, st.APIVersion = "Status", "v1"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	// A failed write means the client went away.
	_ = json.NewEncoder(w).Encode(st)
}

// intParam reads a non-negative integer query parameter, def when absent.
func intParam(req *http.Request, name string, def int) (int, *apierrors.StatusError) {
	s := req.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, apierrors.NewBadRequest("query parameter " + name + " must be a whole number, at least 0; got " + strconv.Quote(s))
	}
	return n, nil
}
