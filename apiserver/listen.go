package apiserver

// How connections reach the handler, and what bounds them:
//
//   - TLS. With a serving certificate (Config.TLSCertFile), clients that
//     speak TLS get it. kubectl and client-go only send a kubeconfig's
//     credentials over https, so the control plane always gives one. On a
//     loopback address plain HTTP is answered on the same port too (the
//     first byte of a connection tells them apart: 0x16 starts a TLS
//     handshake), for the live page and hand-made requests, unless
//     Config.TLSOnly; off loopback only TLS is.
//   - Timeouts on every connection, upstream's: the request headers must
//     arrive within ReadHeaderTimeout (32 s), and an idle keep-alive
//     connection is closed after IdleTimeout (90 s). A body that stalls is
//     bounded by the request deadline (filters/timeout.go).
//   - A cap on open connections (filters/connlimit.go): beyond it new connections
//     wait in the kernel's accept queue, so that client connections never
//     take the file descriptors etcd needs for its own files.

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/soheilhy/cmux"

	"minicp/apiserver/filters"
)

// Upstream's connection timeouts (k8s.io/apiserver's secure serving).
const (
	defaultReadHeaderTimeout = 32 * time.Second
	defaultIdleTimeout       = 90 * time.Second
)

// tlsEnabled reports whether the server has a serving certificate.
func (c *Config) tlsEnabled() bool { return c.TLSCertFile != "" }

// plainHTTPAllowed reports whether plain HTTP is answered besides TLS.
func (c *Config) plainHTTPAllowed() bool {
	if !c.tlsEnabled() {
		return true
	}
	ip := net.ParseIP(c.BindAddress)
	return !c.TLSOnly && ip != nil && ip.IsLoopback()
}

// loadTLS reads the serving certificate, and returns the TLS configuration
// and the DNS names the certificate is for (allowed as Host headers).
func (c *Config) loadTLS() (*tls.Config, []string, error) {
	cert, err := tls.LoadX509KeyPair(c.TLSCertFile, c.TLSPrivateKeyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("loading --tls-cert-file %s and --tls-private-key-file %s: %w", c.TLSCertFile, c.TLSPrivateKeyFile, err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil, nil, fmt.Errorf("parsing --tls-cert-file %s: %w", c.TLSCertFile, err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
		// HTTP/1.1 only: one request stream per connection, so the
		// connection cap and the in-flight limits count the same things.
		NextProtos: []string{"http/1.1"},
	}, leaf.DNSNames, nil
}

// Listen binds the socket cfg names (BindAddress:Port, a free port for
// 0), with the advice a taken port deserves.
func Listen(cfg Config) (net.Listener, error) {
	addr := net.JoinHostPort(cfg.BindAddress, fmt.Sprint(cfg.Port))
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("apiserver port %d is already in use: pass --port 0 for a free port or stop the other process (%w)", cfg.Port, err)
	}
	if err != nil {
		return nil, fmt.Errorf("apiserver: listening on %s: %w", addr, err)
	}
	return ln, nil
}

// listeners opens the listening socket and splits it into what the HTTP
// server serves: plain, TLS, or both. closeRoot closes the socket itself
// when a split owns it.
func (s *Server) listeners() (root net.Listener, serve []net.Listener, startSplit func(), err error) {
	ln := s.cfg.Listener
	if ln == nil {
		if ln, err = Listen(s.cfg); err != nil {
			return nil, nil, nil, err
		}
	}
	root = filters.LimitConnections(ln, filters.MaxConnections(s.cfg.MaxConnections, s.log))
	if !s.cfg.tlsEnabled() {
		return root, []net.Listener{root}, func() {}, nil
	}
	tlsConfig, names, err := s.cfg.loadTLS()
	if err != nil {
		ln.Close()
		return nil, nil, nil, err
	}
	for _, n := range names {
		s.filters.Hosts.Allowed[strings.ToLower(n)] = true
	}
	if !s.cfg.plainHTTPAllowed() {
		return root, []net.Listener{tls.NewListener(root, tlsConfig)}, func() {}, nil
	}
	m := cmux.New(root)
	m.SetReadTimeout(s.cfg.ReadHeaderTimeout)
	tlsLn := m.Match(cmux.TLS())
	plainLn := m.Match(cmux.Any())
	// The split's goroutine (in cmux) ends when root is closed.
	return root, []net.Listener{tls.NewListener(tlsLn, tlsConfig), plainLn}, func() { go m.Serve() }, nil //nolint:errcheck // ends with root
}
