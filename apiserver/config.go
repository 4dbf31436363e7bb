package apiserver

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"minicp/apiserver/admission"
	"minicp/apiserver/filters"
)

// Defaults, as upstream kube-apiserver has them.
const (
	defaultBindAddress = "127.0.0.1"
	defaultPort        = 8080
	// defaultRequestTimeout is upstream's --request-timeout.
	defaultRequestTimeout = 60 * time.Second
	// defaultMaxRequestBodyBytes is upstream's limit on a request body
	// (--max-resource-write-bytes): 3 MiB.
	defaultMaxRequestBodyBytes = 3 << 20
	// defaultSlowRequestThreshold is when upstream's request traces are
	// logged (utiltrace's LogIfLong(500ms) in the REST handlers).
	defaultSlowRequestThreshold = 500 * time.Millisecond
	// minRequestTimeout is how long a watch without timeoutSeconds lasts
	// (upstream --min-request-timeout; upstream adds up to the same again
	// at random, minicp keeps it fixed so labs are predictable).
	minRequestTimeout = 1800 * time.Second
	// Upstream's --max-requests-inflight and --max-mutating-requests-inflight.
	defaultMaxRequestsInflight         = 400
	defaultMaxMutatingRequestsInflight = 200
)

// Config configures the HTTP server. Build it with NewConfig, adjust it
// (or bind it to flags with AddFlags), and check it with Validate.
type Config struct {
	// BindAddress is the IP the server listens on. An address other than
	// loopback is served with TLS only (TLSCertFile is then required).
	BindAddress string
	// Port is the TCP port; 0 picks a free one (see Server.URL).
	Port int
	// Listener, when set, is the socket Start serves on instead of
	// listening on BindAddress:Port itself (made with Listen): the control
	// plane binds it first, to know the apiserver's address before it
	// writes the kubernetes Service's endpoints. Start takes it over.
	Listener net.Listener
	// RequestTimeout bounds every request except watches (upstream
	// --request-timeout). A request's `?timeout=` may shorten it.
	RequestTimeout time.Duration
	// MaxRequestBodyBytes is the largest request body accepted; larger
	// bodies get 413 RequestEntityTooLarge.
	MaxRequestBodyBytes int64
	// Verbosity is -v: at 2 or more every request is logged, and carries
	// its phases in the Minicp-Phases response header.
	Verbosity int
	// DisableAdmissionPlugins turns built-in admission plugins off by name
	// (upstream --disable-admission-plugins). The built-in chain is
	// NamespaceLifecycle.
	DisableAdmissionPlugins []string
	// SlowRequestThreshold: a request (other than a watch) that takes at
	// least this long logs one warning line with its phases; 0 never.
	SlowRequestThreshold time.Duration
	// PhasesHeader returns every response with the Minicp-Phases header:
	// where the request's time went (authentication, admission, storage,
	// cache wait, etcd, encoding).
	PhasesHeader bool
	// Profiling serves Go's runtime profiles at /debug/pprof/ (upstream
	// --profiling, on by default there too).
	Profiling bool
	// TLSCertFile and TLSPrivateKeyFile are the serving certificate and
	// its key (upstream's flags); the control plane makes them when they
	// are not given. TLSOnly refuses plain HTTP on loopback too (listen.go).
	TLSCertFile       string
	TLSPrivateKeyFile string
	TLSOnly           bool
	// ReadHeaderTimeout and IdleTimeout bound every connection: its
	// request headers must arrive in time, and an idle keep-alive
	// connection is closed (upstream's 32 s and 90 s).
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration
	// MaxConnections caps open connections; 0 derives the cap from the
	// file descriptor limit (filters/connlimit.go).
	MaxConnections int
	// MaxRequestsInflight and MaxMutatingRequestsInflight bound the
	// requests served at once, reads and writes apart; beyond them the
	// answer is 429 with Retry-After (filters/inflight.go). Watches do not count.
	// 0 means no limit, as upstream.
	MaxRequestsInflight         int
	MaxMutatingRequestsInflight int
	// Tokens are bearer tokens and their users, given in code: the
	// control plane's own token. TokenAuthFile adds users from a file in
	// upstream's format (--token-auth-file).
	Tokens        map[string]filters.UserInfo
	TokenAuthFile string
	// AnonymousAuth lets requests without a credential through as
	// system:anonymous instead of answering 401. Off in minicp; tests of
	// other parts of the server turn it on.
	AnonymousAuth bool
	// Logger receives the server's logs; nil means slog.Default().
	Logger *slog.Logger
	// Metrics is the registry of the server's stack: the request metrics
	// are registered there and /metrics serves it (with the process's own
	// collectors and etcd's). Nil: a registry of the server's own.
	Metrics MetricsRegistry
}

// MetricsRegistry is where a stack's metrics are registered and read
// from; *prometheus.Registry is one.
type MetricsRegistry interface {
	prometheus.Registerer
	prometheus.Gatherer
}

// NewConfig returns upstream's defaults on the loopback address.
func NewConfig() Config {
	return Config{
		BindAddress:                 defaultBindAddress,
		Port:                        defaultPort,
		RequestTimeout:              defaultRequestTimeout,
		MaxRequestBodyBytes:         defaultMaxRequestBodyBytes,
		SlowRequestThreshold:        defaultSlowRequestThreshold,
		Profiling:                   true,
		ReadHeaderTimeout:           defaultReadHeaderTimeout,
		IdleTimeout:                 defaultIdleTimeout,
		MaxRequestsInflight:         defaultMaxRequestsInflight,
		MaxMutatingRequestsInflight: defaultMaxMutatingRequestsInflight,
	}
}

// AddFlags registers the server's flags on fs, with c's values as defaults.
func (c *Config) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.BindAddress, "bind-address", c.BindAddress, "IP address to serve the Kubernetes API on; off loopback (e.g. 0.0.0.0) only TLS is served")
	fs.StringVar(&c.TLSCertFile, "tls-cert-file", c.TLSCertFile, "serving certificate (PEM); default: one minicp makes in <data-dir>/pki, signed by its own CA, which the kubeconfig carries; a file that ends with its chain's root puts that root in the kubeconfig")
	fs.StringVar(&c.TLSPrivateKeyFile, "tls-private-key-file", c.TLSPrivateKeyFile, "private key of --tls-cert-file (PEM)")
	fs.BoolVar(&c.TLSOnly, "tls-only", c.TLSOnly, "refuse plain HTTP on loopback too (off loopback it always is): every client, the live page included, must speak TLS")
	fs.IntVar(&c.MaxRequestsInflight, "max-requests-inflight", c.MaxRequestsInflight, "most non-mutating requests served at once; more get 429 with Retry-After (watches do not count); 0 = no limit")
	fs.IntVar(&c.MaxMutatingRequestsInflight, "max-mutating-requests-inflight", c.MaxMutatingRequestsInflight, "most mutating requests (create, update, patch, delete) served at once; more get 429 with Retry-After; 0 = no limit")
	fs.IntVar(&c.MaxConnections, "max-connections", c.MaxConnections, "most client connections open at once; more wait to be accepted; 0 = three quarters of the open files limit (raised to its hard limit at start), keeping the rest for etcd")
	fs.IntVar(&c.Port, "port", c.Port, "port to serve the Kubernetes API on; 0 picks a free port")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", c.RequestTimeout, "longest time a request other than a watch may take before it fails with 504 Timeout")
	fs.IntVar(&c.Verbosity, "v", c.Verbosity, "log verbosity: 2 logs every request and returns its phases in the Minicp-Phases header")
	fs.Func("disable-admission-plugins", "comma-separated admission plugins to turn off (built in: "+admission.NamespaceLifecycleName+")", func(v string) error {
		c.DisableAdmissionPlugins = nil
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				c.DisableAdmissionPlugins = append(c.DisableAdmissionPlugins, name)
			}
		}
		return nil
	})
	fs.DurationVar(&c.SlowRequestThreshold, "slow-request-threshold", c.SlowRequestThreshold, "log the phases (admission, cache wait, etcd, encoding, ...) of every request at least this slow; 0 = never")
	fs.BoolVar(&c.Profiling, "profiling", c.Profiling, "serve Go's runtime profiles at /debug/pprof/ (CPU, heap, goroutines), e.g. kubectl get --raw '/debug/pprof/profile?seconds=20' > cpu.out; go tool pprof cpu.out")
	fs.StringVar(&c.TokenAuthFile, "token-auth-file", c.TokenAuthFile, "file of more users, one a line in upstream's format: token,user,uid,\"group1,group2\" (the kubeconfig's token always works)")
	fs.BoolVar(&c.PhasesHeader, "phases-header", c.PhasesHeader, "return every response with a Minicp-Phases header saying where the request's time went (see it with kubectl -v=8)")
}

// Validate reports every problem in c at once.
func (c *Config) Validate() error {
	var errs []error
	ip := net.ParseIP(c.BindAddress)
	switch {
	case ip == nil:
		errs = append(errs, fmt.Errorf("--bind-address %q is not an IP address; use a loopback address such as 127.0.0.1", c.BindAddress))
	case !ip.IsLoopback() && !c.tlsEnabled():
		errs = append(errs, fmt.Errorf("refusing to serve plain HTTP on %s: off loopback minicp serves TLS only; give --tls-cert-file and --tls-private-key-file", c.BindAddress))
	}
	if (c.TLSCertFile == "") != (c.TLSPrivateKeyFile == "") {
		errs = append(errs, errors.New("--tls-cert-file and --tls-private-key-file go together: give both"))
	}
	if c.TLSOnly && !c.tlsEnabled() {
		errs = append(errs, errors.New("--tls-only needs a serving certificate (--tls-cert-file)"))
	}
	if c.MaxRequestsInflight < 0 || c.MaxMutatingRequestsInflight < 0 || c.MaxConnections < 0 {
		errs = append(errs, errors.New("--max-requests-inflight, --max-mutating-requests-inflight and --max-connections must not be negative (0 = no limit, or derived for connections)"))
	}
	if c.ReadHeaderTimeout <= 0 || c.IdleTimeout <= 0 {
		errs = append(errs, fmt.Errorf("the header and idle timeouts must be positive, got %s and %s", c.ReadHeaderTimeout, c.IdleTimeout))
	}
	if c.Port < 0 || c.Port > 65535 {
		errs = append(errs, fmt.Errorf("--port %d is out of range; use 0-65535 (0 picks a free port)", c.Port))
	}
	if c.RequestTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--request-timeout must be positive, got %s", c.RequestTimeout))
	}
	if c.MaxRequestBodyBytes <= 0 {
		errs = append(errs, fmt.Errorf("the request body limit must be positive, got %d", c.MaxRequestBodyBytes))
	}
	if c.Verbosity < 0 {
		errs = append(errs, fmt.Errorf("-v must not be negative, got %d", c.Verbosity))
	}
	for _, name := range c.DisableAdmissionPlugins {
		if name != admission.NamespaceLifecycleName {
			errs = append(errs, fmt.Errorf("--disable-admission-plugins: unknown plugin %q (built in: %s)", name, admission.NamespaceLifecycleName))
		}
	}
	if c.SlowRequestThreshold < 0 {
		errs = append(errs, fmt.Errorf("--slow-request-threshold must not be negative, got %s", c.SlowRequestThreshold))
	}
	return errors.Join(errs...)
}
