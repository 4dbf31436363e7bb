package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/apiserver"
	"minicp/embedetcd"
	"minicp/internal/datadir"
	"minicp/registry"
	"minicp/watchcache"
)

// DefaultNamespaces are created at start-up, as a real cluster has them.
var DefaultNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// ControlPlane is a running minicp: etcd, registry and apiserver.
type ControlPlane struct {
	cfg    Config
	logger *slog.Logger

	// metrics is the stack's Prometheus registry: the registry's, the
	// watch cache's and the apiserver's series, served on /metrics.
	metrics    *prometheus.Registry
	etcd       *embedetcd.Cluster // nil with --etcd-servers
	etcdClient *clientv3.Client   // owned by etcd when embedded, by us otherwise
	store      *registry.Store
	compactor  *registry.Compactor // the apiserver's etcd compactor (compaction.go)
	cache      *watchcache.Cache   // in front of store (watchcache.go)
	api        *apiserver.Server
	nodes      *nodes     // simulated nodes (nodes.go)
	triage     *triage    // events etcd, faults, object counts (triage.go)
	events     *eventSink // the controllers' event broadcaster (events.go)
	crds       *crdLoops  // custom resources served (crds.go)
	// controllers are the control loops that are API clients
	// (controllermanager.go).
	controllers *controllerManager
	listener    net.Listener // the apiserver's socket, bound first; api.Start takes it over

	kubeconfig string
	lock       *dataDirLock // the data directory's lock, held until Close (lock.go)
	// caPEM is the CA of the serving certificate minicp made (pki.go), or
	// the root that ends --tls-cert-file's chain (nil when it ends with
	// none). token is the admin bearer token (credentials.go);
	// kubeconfigWritten is set once the kubeconfig is on disk, for /readyz.
	caPEM             []byte
	token             string
	kubeconfigWritten atomic.Bool

	closeOnce sync.Once
	closeErr  error
}

// Start brings the control plane up and returns once it is ready to serve:
// etcd has a leader, the default namespaces exist, the apiserver answers,
// the simulated nodes are registered, and the kubeconfig is on disk. On
// error everything already started is stopped again.
func Start(ctx context.Context, cfg Config) (_ *ControlPlane, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// The first write's type converter is parsed while etcd elects its
	// leader, in a goroutine of its own, rather than on that write.
	apiserver.WarmUp()
	if cfg.Logger == nil {
		cfg.Logger = newLogger(os.Stderr, cfg.APIServer.Verbosity)
	}
	if cfg.APIServer.Logger == nil {
		cfg.APIServer.Logger = cfg.Logger
	}
	if cfg.Resources == nil {
		if cfg.Resources, err = cfg.builtinKinds().NewTable(); err != nil {
			return nil, err
		}
	}
	cp := &ControlPlane{cfg: cfg, logger: cfg.Logger, metrics: prometheus.NewRegistry()}
	cp.cfg.APIServer.Metrics = cp.metrics
	cp.cfg.WatchCache.Metrics = cp.metrics
	defer func() {
		if err != nil {
			cp.Close()
		}
	}()

	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data directory: %w", err)
	}
	if cp.lock, err = lockDataDir(cfg.DataDir); err != nil {
		return nil, err
	}
	// A kubeconfig left by an earlier run names a server that is gone:
	// it is written again once this one is ready.
	cp.kubeconfig = datadir.Kubeconfig(cfg.DataDir)
	if err := os.Remove(cp.kubeconfig); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("removing the old kubeconfig: %w", err)
	}
	if cp.token, err = loadOrCreateToken(cfg.DataDir); err != nil {
		return nil, err
	}
	if err := cp.startEtcd(ctx); err != nil {
		return nil, err
	}
	if err := datadir.WriteEtcdEndpoints(cfg.DataDir, cp.EtcdEndpoints()); err != nil {
		return nil, err
	}
	if err := cp.startTriage(ctx); err != nil {
		return nil, err
	}
	cp.store, err = registry.NewStore(cp.etcdClient, cfg.Resources, cp.triage.storeOptions(registry.Options{
		StorageMediaType: cfg.StorageMediaType,
		EventTTL:         cfg.EventTTL,
		KeyTTL:           cfg.Nodes.keyTTL(),
		Metrics:          cp.metrics,
		GarbageCollector: cfg.EnableGarbageCollector,
		Logger:           cp.logger,
	}))
	if err != nil {
		return nil, err
	}
	if err := cp.ensureNamespaces(ctx); err != nil {
		return nil, err
	}
	// The apiserver's socket is bound before anything else is written, so
	// the kubernetes Service's endpoints can name it; like the namespaces,
	// they are then in etcd before the watch cache lists. A failure here
	// (etcd refusing writes) is logged, not fatal, as upstream's
	// reconciler's: the apiserver serves without them.
	if cp.listener, err = apiserver.Listen(cp.cfg.APIServer); err != nil {
		return nil, err
	}
	cp.cfg.APIServer.Listener = cp.listener
	if err := cp.ensureKubernetesService(ctx); err != nil {
		cp.logger.Warn("could not write the kubernetes Service and its endpoints", "err", err)
	}
	cp.startCompactor()
	if err := cp.startWatchCache(ctx); err != nil {
		return nil, err
	}
	apiCfg, err := cp.servingConfig() // credentials.go, pki.go
	if err != nil {
		return nil, err
	}
	cp.api, err = apiserver.New(apiCfg, cfg.Resources, cp.cache, cp.etcdReady)
	if err != nil {
		return nil, err
	}
	cp.api.AddReadyCheck(apiserver.ReadyCheck{Name: "kubeconfig", Check: func(context.Context) error { return cp.credentialsInPlace() }})
	cp.api.Handle("/debug/watchcache", cp.cache.Handler())
	cp.triage.registerAPI(cp.api, cp.etcd)
	cp.registerUI()
	if err := cp.startCRDServing(ctx); err != nil {
		return nil, err
	}
	if err := cp.api.Start(); err != nil {
		return nil, err
	}
	if err := cp.startEvents(ctx); err != nil {
		return nil, err
	}
	cp.startObjectCounter()
	// The controllers before the simulated nodes, as a controller manager
	// runs beside kubelets rather than after them: their informers' first
	// lists are consistent reads, which the watch cache answers at once
	// while its etcd watches are idle; started just after the nodes'
	// registration burst, the node lifecycle controller would wait up to a
	// progress request period (watchcache/progress.go) for the nodes' and
	// leases' caches to catch up before minicp could say it is ready. The
	// garbage collector alone starts after the registration
	// (controllermanager.go).
	if err := cp.startControllers(ctx, false); err != nil {
		return nil, err
	}
	if err := cp.startNodes(ctx); err != nil {
		return nil, err
	}
	if err := cp.startControllers(ctx, true); err != nil {
		return nil, err
	}
	if err := writeKubeconfig(cp.kubeconfig, cp.RESTConfig()); err != nil {
		return nil, err
	}
	cp.kubeconfigWritten.Store(true)
	cp.logger.Info("minicp ready", "apiserver", cp.api.URL(), "etcd", cp.EtcdEndpoints())
	return cp, nil
}

func (cp *ControlPlane) startEtcd(ctx context.Context) error {
	if !cp.cfg.embedded() {
		c, err := clientv3.New(clientv3.Config{
			Endpoints:   cp.cfg.EtcdServers,
			DialTimeout: 5 * time.Second,
			Context:     ctx,
			Logger:      quietZap(),
		})
		if err != nil {
			return fmt.Errorf("connecting to --etcd-servers %v: %w", cp.cfg.EtcdServers, err)
		}
		cp.etcdClient = c
		if err := cp.etcdReachable(ctx); err != nil {
			return fmt.Errorf("etcd at %v is not answering: %w", cp.cfg.EtcdServers, err)
		}
		return nil
	}
	cluster, err := embedetcd.Start(ctx, cp.cfg.embeddedEtcd())
	if err != nil {
		return err
	}
	cp.etcd = cluster
	cp.etcdClient = cluster.Client()
	return nil
}

// etcdReady is the apiserver's readiness check: etcd answers a quorum read
// and has no alarm raised (alarms.go).
func (cp *ControlPlane) etcdReady(ctx context.Context) error {
	if err := cp.etcdReachable(ctx); err != nil {
		return err
	}
	return cp.checkEtcdAlarms(ctx)
}

// etcdReachable checks that etcd answers a quorum read.
func (cp *ControlPlane) etcdReachable(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := cp.etcdClient.Get(ctx, "health")
	return err
}

// ensureNamespaces creates the namespaces every cluster starts with; on a
// restart they exist already and are only read, so that minicp also starts
// on an etcd whose NOSPACE alarm refuses writes.
func (cp *ControlPlane) ensureNamespaces(ctx context.Context) error {
	res, ok := cp.cfg.Resources.Lookup(corev1.SchemeGroupVersion.WithResource("namespaces"))
	if !ok {
		return errors.New("the resource table has no namespaces")
	}
	for _, name := range DefaultNamespaces {
		if _, err := cp.store.Get(ctx, res, "", name, registry.GetOptions{}); err == nil {
			continue
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		_, err := cp.store.Create(ctx, res, "", ns, registry.WriteOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", name, err)
		}
	}
	return nil
}

// URL is the apiserver's base URL.
func (cp *ControlPlane) URL() string { return cp.api.URL() }

// KubeconfigPath is the kubeconfig written at start-up.
func (cp *ControlPlane) KubeconfigPath() string { return cp.kubeconfig }

// EtcdClient is the client the registry uses.
func (cp *ControlPlane) EtcdClient() *clientv3.Client { return cp.etcdClient }

// EtcdCluster is the embedded etcd, or nil with --etcd-servers.
func (cp *ControlPlane) EtcdCluster() *embedetcd.Cluster { return cp.etcd }

// EtcdEndpoints are the client URLs of the etcd in use.
func (cp *ControlPlane) EtcdEndpoints() []string {
	if cp.etcd != nil {
		return cp.etcd.Endpoints()
	}
	return cp.cfg.EtcdServers
}

// Close shuts the control plane down gracefully, in this order:
//  0. the simulated nodes stop, then the controller manager's loops in
//     the reverse order of their start (they are clients of the
//     apiserver), then the custom resources' Serving and the object counter;
//  1. the apiserver stops accepting requests, ends open watches and waits
//     for in-flight requests, so every acknowledged write is in etcd; then
//     the watch cache stops its etcd watches, and the compactor stops;
//  2. the etcd client is closed (only when minicp opened it itself);
//  3. the embedded etcd members stop, flushing their data (the events
//     etcd's last, with the clients of --etcd-servers-overrides);
//  4. the data directory's lock is released, for the next minicp.
//
// It is safe to call more than once; later calls return the first result.
func (cp *ControlPlane) Close() error {
	cp.closeOnce.Do(func() {
		var errs []error
		cp.stopNodes()
		cp.stopControllers()
		cp.stopCRDLoops()
		cp.stopObjectCounter()
		cp.stopEvents()
		if cp.api != nil {
			ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
			errs = append(errs, cp.api.Shutdown(ctx))
			cancel()
		}
		if cp.listener != nil {
			// Closed by Shutdown once served; a start that failed before
			// serving leaves it to be closed here (a second Close is harmless).
			_ = cp.listener.Close()
		}
		if cp.cache != nil {
			cp.cache.Close()
		}
		cp.stopCompactor()
		if cp.etcd == nil && cp.etcdClient != nil {
			errs = append(errs, cp.etcdClient.Close())
		}
		if cp.etcd != nil {
			errs = append(errs, cp.etcd.Close())
		}
		errs = append(errs, cp.closeTriage())
		cp.lock.release()
		cp.closeErr = errors.Join(errs...)
	})
	return cp.closeErr
}

// ShutdownTimeout bounds how long Close waits for requests in flight
// (watches are ended at once); with the rest of Close, minicp stops well
// within StopLimit.
const ShutdownTimeout = 5 * time.Second

// StopLimit is how long cmd/minicp lets a stop take after SIGINT or
// SIGTERM, at any stage, before it exits anyway: a learner's Ctrl-C works.
const StopLimit = 9 * time.Second

// Run starts the control plane, prints how to reach it, and serves until ctx
// is cancelled (SIGINT/SIGTERM in cmd/minicp), then shuts down. Cancelled
// during start-up, it stops what it started and returns nil.
func Run(ctx context.Context, cfg Config, out io.Writer) error {
	started := time.Now()
	cp, err := Start(ctx, cfg)
	if err != nil && ctx.Err() != nil {
		fmt.Fprintf(out, "minicp: stopped during start-up (%v)\n", err)
		return nil
	}
	if err != nil {
		return err
	}
	printBanner(out, cp, time.Since(started))
	<-ctx.Done()
	fmt.Fprintln(out, "minicp: shutting down")
	return cp.Close()
}

func (c *Config) etcdDataDir() string { return datadir.Etcd(c.DataDir) }

// Metrics is the stack's Prometheus registry (what /metrics serves besides
// the process's Go and etcd collectors).
func (cp *ControlPlane) Metrics() prometheus.Gatherer { return cp.metrics }

// Resources is the table the stack serves.
func (cp *ControlPlane) Resources() *registry.Table { return cp.cfg.Resources }
