package embedetcd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/soheilhy/cmux"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/config"
	"go.etcd.io/etcd/server/v3/etcdserver"
	"go.etcd.io/etcd/server/v3/etcdserver/api/etcdhttp"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3election"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3election/v3electionpb"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3lock"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3lock/v3lockpb"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3rpc"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
)

// Timeouts of a member's shutdown.
const (
	// grpcDrainTimeout bounds how long in-flight client RPCs may finish
	// before the gRPC server is stopped hard. Watches never finish on their
	// own, so a member with open watches always waits this long.
	grpcDrainTimeout = time.Second
	// httpShutdownTimeout bounds the graceful stop of each HTTP server, as
	// embed does for its peer listeners.
	httpShutdownTimeout = time.Second
	// sniffTimeout bounds how long a new client connection may take to
	// send its first bytes, from which cmux tells gRPC from HTTP/1. cmux
	// waits for connections it is still sniffing when it stops, so without
	// a bound a client that connects and stays silent would hold Close.
	sniffTimeout = time.Second
)

// gRPC keepalive settings embed.NewConfig uses. The enforcement policy
// matters: grpc-go's own default (5 minutes) would reject the 30 s pings of
// kube-apiserver's etcd client with "too_many_pings".
var grpcKeepalive = []grpc.ServerOption{
	grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second}),
	grpc.KeepaliveParams(keepalive.ServerParameters{Time: 2 * time.Hour, Timeout: 20 * time.Second}),
}

// quietHTTPLog drops net/http's per-connection error logs, as etcd does.
var quietHTTPLog = log.New(io.Discard, "", 0)

// Member is one etcd server of a Cluster with its two listeners. The peer
// listener carries Raft messages and snapshots between members (etcd's
// peer HTTP handler); the client listener answers etcd's v3 gRPC API and,
// over HTTP/1, /health, /metrics and /version.
//
// A member goes through listen, startServer, serveClients and, on the way
// down, stopClients, stopServer, stopPeer and wait. Every step tolerates
// the previous ones having been skipped by a failed start.
type Member struct {
	name      string
	dataDir   string
	clientURL url.URL
	peerURL   url.URL
	lg        *zap.Logger

	// The fields below are written while the cluster starts (one
	// goroutine) and only read afterwards.
	clientLn   net.Listener // closed by the client servers, or by stopClients if they never ran
	peerLn     net.Listener // closed by peerHTTP
	peerHTTP   *http.Server // serves peerGate on peerLn from listen on
	peerGate   peerGate
	srv        *etcdserver.EtcdServer // nil until the server is started
	clientMux  cmux.CMux              // splits clientLn into gRPC (HTTP/2) and HTTP/1
	grpcSrv    *grpc.Server
	clientHTTP *http.Server
	v3c        *clientv3.Client // in-process client behind the lock and election services

	// stopping is set when shutdown begins; a serving goroutine that
	// returns after that has not failed.
	stopping atomic.Bool
	// stopped is set by stop, under the cluster's opMu, once the member is
	// down; a stopped member is never started again (RestartMember makes a
	// new one). Read only under opMu.
	stopped bool
	// wg counts the serving goroutines (peer HTTP, client mux, gRPC,
	// client HTTP); wait blocks on it.
	wg sync.WaitGroup
}

// Name returns the member's name, e.g. "minicp-etcd" or "minicp-etcd-1".
func (m *Member) Name() string { return m.name }

// ClientURL returns the URL etcd clients dial, e.g. "http://127.0.0.1:2379".
func (m *Member) ClientURL() string { return m.clientURL.String() }

// PeerURL returns the URL other members send Raft traffic to.
func (m *Member) PeerURL() string { return m.peerURL.String() }

// Server returns the member's etcd server, for cluster operations such as
// MoveLeader, Leader or the lessor's state.
func (m *Member) Server() *etcdserver.EtcdServer { return m.srv }

// ID returns the member's ID, as etcdctl prints it in hex.
func (m *Member) ID() uint64 { return uint64(m.srv.MemberID()) }

// Running reports whether the member's server is up: it was started and
// neither StopMember nor Close has stopped it.
func (m *Member) Running() bool {
	if m.srv == nil {
		return false
	}
	select {
	case <-m.srv.StopNotify():
		return false
	default:
		return true
	}
}

// stop takes the member down, in the order Cluster.Close uses for all
// members at once: clients, server, peers, then waits for its goroutines.
func (m *Member) stop() error {
	errs := []error{m.stopClients()}
	m.stopServer()
	errs = append(errs, m.stopPeer())
	m.wait()
	m.stopped = true
	return errors.Join(errs...)
}

// listenMember binds a member's client and peer listeners on the given
// ports (0: free ones) and starts answering peers (with 503 until the etcd
// server exists).
func listenMember(c *Config, name string, clientPort, peerPort int) (*Member, error) {
	clientLn, err := listenTCP(c.Host, clientPort, "client")
	if err != nil {
		return nil, err
	}
	// A plain listener, as in etcd's integration framework. embed wraps
	// peer connections in per-read deadlines, which defeat net/http's abort
	// of its background read: every peer request would then linger until
	// the next one arrives or the deadline passes.
	peerLn, err := listenTCP(c.Host, peerPort, "peer")
	if err != nil {
		return nil, errors.Join(err, clientLn.Close())
	}
	m := &Member{
		name:      name,
		dataDir:   filepath.Join(c.DataDir, name),
		clientURL: url.URL{Scheme: "http", Host: clientLn.Addr().String()},
		peerURL:   url.URL{Scheme: "http", Host: peerLn.Addr().String()},
		lg:        c.Logger.With(zap.String("member", name)),
		clientLn:  clientLn,
		peerLn:    peerLn,
	}
	m.servePeers()
	return m, nil
}

// listenTCP listens on host:port and turns "address in use" into an error
// that says which flag to change.
func listenTCP(host string, port int, role string) (net.Listener, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		if isAddrInUse(err) {
			return nil, &portInUseError{role: role, port: port, err: err}
		}
		return nil, fmt.Errorf("etcd %s listener on %s:%d: %w", role, host, port, err)
	}
	return ln, nil
}

// peerGate is the peer listener's handler. Until the member's etcd server
// exists it answers 503, so that a member bootstrapping next to it gets a
// quick "not yet" when it asks whether this one already joined, instead
// of waiting a second for a listener nobody serves.
type peerGate struct {
	h atomic.Pointer[http.Handler] // etcd's peer handler once set; never unset
}

func (g *peerGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h := g.h.Load(); h != nil {
		(*h).ServeHTTP(w, r)
		return
	}
	http.Error(w, "etcd member is starting", http.StatusServiceUnavailable)
}

// servePeers starts the goroutine serving peerGate on the peer listener;
// stopPeer ends it.
func (m *Member) servePeers() {
	m.peerHTTP = &http.Server{Handler: &m.peerGate, ReadHeaderTimeout: 5 * time.Second, ErrorLog: quietHTTPLog}
	m.goServe("peer HTTP", func() error { return m.peerHTTP.Serve(m.peerLn) })
}

// startServer creates the etcd server from sc, starts it (Raft loop,
// applier, lessor) and opens the peer gate to it.
func (m *Member) startServer(sc config.ServerConfig) error {
	srv, err := etcdserver.NewServer(sc)
	if err != nil {
		return fmt.Errorf("starting etcd member %s in %s: %w", m.name, m.dataDir, err)
	}
	srv.Start()
	m.srv = srv
	var h http.Handler = etcdhttp.NewPeerHandler(m.lg, srv)
	m.peerGate.h.Store(&h)
	return nil
}

// serveClients starts answering clients; call it once the server is ready,
// as embed does. HTTP/2 connections (gRPC) and HTTP/1 requests share the
// client port, told apart by cmux from their first bytes.
func (m *Member) serveClients() {
	m.clientMux = cmux.New(m.clientLn)
	m.clientMux.SetReadTimeout(sniffTimeout)
	grpcLn := m.clientMux.Match(cmux.HTTP2())
	httpLn := m.clientMux.Match(cmux.HTTP1())

	m.grpcSrv = v3rpc.Server(m.srv, nil, nil, grpcKeepalive...)
	m.v3c = v3client.New(m.srv)
	v3electionpb.RegisterElectionServer(m.grpcSrv, v3election.NewElectionServer(m.v3c))
	v3lockpb.RegisterLockServer(m.grpcSrv, v3lock.NewLockServer(m.v3c))

	mux := http.NewServeMux()
	etcdhttp.HandleDebug(mux)
	etcdhttp.HandleVersion(mux, m.srv)
	etcdhttp.HandleMetrics(mux)
	etcdhttp.HandleHealth(m.lg, mux, m.srv)
	m.clientHTTP = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ErrorLog: quietHTTPLog}

	m.goServe("client gRPC", func() error { return m.grpcSrv.Serve(grpcLn) })
	m.goServe("client HTTP", func() error { return m.clientHTTP.Serve(httpLn) })
	m.goServe("client mux", m.clientMux.Serve)
}

// goServe runs serve in a goroutine counted by m.wg. serve returns when its
// listener is closed; an error before shutdown began is logged.
func (m *Member) goServe(what string, serve func() error) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		err := serve()
		if err != nil && !m.stopping.Load() && !errors.Is(err, http.ErrServerClosed) {
			m.lg.Error("etcd member stopped serving", zap.String("what", what), zap.Error(err))
		}
	}()
}

// stopClients stops answering clients: gRPC finishes in-flight RPCs for up
// to grpcDrainTimeout, then cuts the rest (watches end with an error); the
// HTTP endpoints shut down; the client listener is closed.
func (m *Member) stopClients() error {
	m.stopping.Store(true)
	if m.clientMux == nil { // never served: only the listener to close
		return ignoreClosed(m.clientLn.Close())
	}
	drained := make(chan struct{}) // closed by the goroutine below when GracefulStop returns
	// GracefulStop blocks until open RPCs end; run it aside so that it can
	// be cut short. The goroutine ends before stopClients returns.
	go func() {
		defer close(drained)
		m.grpcSrv.GracefulStop()
	}()
	select {
	case <-drained:
	case <-time.After(grpcDrainTimeout):
		m.grpcSrv.Stop()
		<-drained
	}
	// gRPC closed the client listener already (cmux's listeners share it).
	err := shutdownHTTP(m.clientHTTP)
	// An in-process client has no connection; Close reports only its
	// own cancelled context.
	if cerr := m.v3c.Close(); cerr != nil && !errors.Is(cerr, context.Canceled) {
		err = errors.Join(err, cerr)
	}
	return err
}

// stopServer stops the etcd server without handing leadership over (the
// whole cluster is going away) and waits for its goroutines; the backend
// is closed when it returns.
func (m *Member) stopServer() {
	m.stopping.Store(true)
	if m.srv != nil {
		m.srv.HardStop()
	}
}

// stopPeer stops answering peers and closes the peer listener, giving Raft
// streams up to httpShutdownTimeout to end before they are cut.
func (m *Member) stopPeer() error {
	m.stopping.Store(true)
	return shutdownHTTP(m.peerHTTP)
}

// shutdownHTTP stops srv: it closes the listener and idle connections,
// lets busy ones finish for up to httpShutdownTimeout and then cuts them.
func shutdownHTTP(srv *http.Server) error {
	ctx, cancel := context.WithTimeout(context.Background(), httpShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close()
	}
	return ignoreClosed(err)
}

// wait blocks until every serving goroutine of the member has returned.
func (m *Member) wait() { m.wg.Wait() }

// ignoreClosed treats "already closed" as success: shutdown steps close
// listeners that another step may have closed first.
func ignoreClosed(err error) error {
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
