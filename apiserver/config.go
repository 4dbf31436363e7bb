package apiserver

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"time"
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
	// minRequestTimeout is how long a watch without timeoutSeconds lasts
	// (upstream --min-request-timeout; upstream adds up to the same again
	// at random, minicp keeps it fixed so labs are predictable).
	minRequestTimeout = 1800 * time.Second
)

// Config configures the HTTP server. Build it with NewConfig, adjust it
// (or bind it to flags with AddFlags), and check it with Validate.
type Config struct {
	// BindAddress is the IP the server listens on. Only loopback addresses
	// are accepted: minicp has no authentication.
	BindAddress string
	// Port is the TCP port; 0 picks a free one (see Server.URL).
	Port int
	// RequestTimeout bounds every request except watches (upstream
	// --request-timeout). A request's `?timeout=` may shorten it.
	RequestTimeout time.Duration
	// MaxRequestBodyBytes is the largest request body accepted; larger
	// bodies get 413 RequestEntityTooLarge.
	MaxRequestBodyBytes int64
	// Verbosity is -v: at 2 or more every request is logged.
	Verbosity int
	// Logger receives the server's logs; nil means slog.Default().
	Logger *slog.Logger
}

// NewConfig returns upstream's defaults on the loopback address.
func NewConfig() Config {
	return Config{
		BindAddress:         defaultBindAddress,
		Port:                defaultPort,
		RequestTimeout:      defaultRequestTimeout,
		MaxRequestBodyBytes: defaultMaxRequestBodyBytes,
	}
}

// AddFlags registers the server's flags on fs, with c's values as defaults.
func (c *Config) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.BindAddress, "bind-address", c.BindAddress, "IP address to serve the Kubernetes API on (loopback only: minicp has no authentication)")
	fs.IntVar(&c.Port, "port", c.Port, "port to serve the Kubernetes API on; 0 picks a free port")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", c.RequestTimeout, "longest time a request other than a watch may take before it fails with 504 Timeout")
	fs.IntVar(&c.Verbosity, "v", c.Verbosity, "log verbosity: 2 logs every request")
}

// Validate reports every problem in c at once.
func (c *Config) Validate() error {
	var errs []error
	ip := net.ParseIP(c.BindAddress)
	switch {
	case ip == nil:
		errs = append(errs, fmt.Errorf("--bind-address %q is not an IP address; use a loopback address such as 127.0.0.1", c.BindAddress))
	case !ip.IsLoopback():
		errs = append(errs, fmt.Errorf("refusing to bind to %s: minicp has no authentication yet; use a loopback address such as 127.0.0.1", c.BindAddress))
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
	return errors.Join(errs...)
}
