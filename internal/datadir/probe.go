package datadir

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// ProbeTimeout bounds the quick check tools make before their real
// request: long enough for a loaded loopback, short enough that a learner
// whose minicp is not running hears so at once (a client's own retries
// take 10-20 s to give up, and then blame a deadline or a quorum).
const ProbeTimeout = time.Second

// Probe reports whether anything accepts a TCP connection at one of urls
// (etcd client URLs or an apiserver URL) within ProbeTimeout. It asks
// every URL at once and returns nil at the first that answers. It says
// nothing about the health of what answers: a member without quorum still
// answers, and the real request then says what is wrong.
func Probe(ctx context.Context, urls []string) error {
	if len(urls) == 0 {
		return errors.New("no address to try")
	}
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	// results receives one answer per URL from the dialing goroutines
	// below; it is buffered so none blocks after Probe has returned.
	results := make(chan error, len(urls))
	for _, u := range urls {
		go func() { results <- dial(ctx, u) }()
	}
	var errs []error
	for range urls {
		err := <-results
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// dial opens and closes one TCP connection to the host of rawURL.
func dial(ctx context.Context, rawURL string) error {
	host := rawURL
	if u, err := url.Parse(rawURL); err == nil && u.Host != "" {
		host = u.Host
		if u.Port() == "" {
			port := "80"
			if u.Scheme == "https" {
				port = "443"
			}
			host = net.JoinHostPort(u.Hostname(), port)
		}
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return fmt.Errorf("%s: %w", rawURL, err)
	}
	return conn.Close()
}

// NotRunningError is what a tool says when nothing answers where it looked
// for minicp: what it tried, where those addresses came from, and the fix.
type NotRunningError struct {
	What    string   // "etcd" or "the apiserver"
	URLs    []string // what was tried
	From    string   // where the URLs came from, e.g. "--etcd-endpoints"
	DataDir string   // the data directory the tool was pointed at
	Err     error    // the probe's error
	// Fix, when set, replaces the usual advice (start minicp on DataDir,
	// or point the tool elsewhere): for addresses that did not come from
	// the data directory, such as a kubeconfig named by $KUBECONFIG.
	Fix string
}

func (e *NotRunningError) Error() string {
	if e.Fix != "" {
		return fmt.Sprintf("nothing answers at %s %s (%s): %s", e.What, strings.Join(e.URLs, ","), e.From, e.Fix)
	}
	other := "--kubeconfig FILE"
	if e.What == "etcd" {
		other = "--etcd-endpoints URLS"
	}
	return fmt.Sprintf("nothing answers at %s %s (%s): is minicp running on data directory %s? "+
		"Start it with `go run ./cmd/minicp --data-dir %s`, or point this command at a running one with --data-dir DIR or %s",
		e.What, strings.Join(e.URLs, ","), e.From, e.DataDir, e.DataDir, other)
}

func (e *NotRunningError) Unwrap() error { return e.Err }
