package relist

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
)

// Link is a TCP relay between clients and an apiserver that can be cut and
// restored, to disconnect informers from the server without stopping
// either. While cut, it closes every relayed connection and holds new ones:
// it accepts them but forwards nothing, so clients wait on their requests
// instead of failing and backing off. Restore relays the held connections
// (their requests then reach the server) and every new one.
type Link struct {
	ln  net.Listener
	log *slog.Logger

	// mu guards the fields below.
	mu     sync.Mutex
	target string              // host:port connections are relayed to
	cut    bool                // new connections are held while set
	held   []net.Conn          // accepted while cut, waiting for Restore
	open   map[net.Conn]func() // relayed client connections -> closes both ends
	closed bool

	// wg counts the accept loop and every relay goroutine; Close waits.
	wg sync.WaitGroup
}

// NewLink listens on a free loopback port and relays to target
// (host:port).
func NewLink(target string, log *slog.Logger) (*Link, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("link: listening: %w", err)
	}
	l := &Link{ln: ln, log: log, target: target, open: map[net.Conn]func(){}}
	l.wg.Add(1)
	// The accept loop ends when Close closes the listener.
	go l.accept()
	return l, nil
}

// URL is the base URL clients should use instead of the server's.
func (l *Link) URL() string { return "http://" + l.ln.Addr().String() }

// URLFor is the link's URL with the scheme of apiserverURL: a link relays
// bytes, so TLS passes through it (the serving certificate names
// 127.0.0.1, where the link listens).
func (l *Link) URLFor(apiserverURL string) string {
	if strings.HasPrefix(apiserverURL, "https://") {
		return "https://" + l.ln.Addr().String()
	}
	return l.URL()
}

// SetTarget makes connections relayed from now on go to target (host:port),
// e.g. an apiserver restarted on another port.
func (l *Link) SetTarget(target string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.target = target
}

// Cut closes every relayed connection and holds new ones until Restore.
func (l *Link) Cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = true
	for _, closeBoth := range l.open {
		closeBoth()
	}
}

// Held is the number of connections waiting for Restore.
func (l *Link) Held() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.held)
}

// Restore relays the held connections and every new one.
func (l *Link) Restore() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = false
	for _, c := range l.held {
		l.relayLocked(c)
	}
	l.held = nil
}

// Close stops accepting, closes every connection and waits for the relay
// goroutines.
func (l *Link) Close() error {
	err := l.ln.Close()
	l.mu.Lock()
	l.closed = true
	for _, closeBoth := range l.open {
		closeBoth()
	}
	for _, c := range l.held {
		err = errors.Join(err, c.Close())
	}
	l.held = nil
	l.mu.Unlock()
	l.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

func (l *Link) accept() {
	defer l.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return // Close closed the listener
		}
		l.mu.Lock()
		switch {
		case l.closed:
			_ = c.Close() // closing anyway; nothing to report
		case l.cut:
			l.held = append(l.held, c)
		default:
			l.relayLocked(c)
		}
		l.mu.Unlock()
	}
}

// relayLocked connects client to the target and copies both ways in two
// goroutines, which end when either side closes; l.mu must be held.
func (l *Link) relayLocked(client net.Conn) {
	server, err := net.Dial("tcp", l.target)
	if err != nil {
		l.log.Debug("link: target unreachable", "target", l.target, "err", err)
		_ = client.Close() // the client sees a closed connection, as with a dead server
		return
	}
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			_ = client.Close() // tearing down: errors change nothing
			_ = server.Close()
		})
	}
	l.open[client] = closeBoth
	l.wg.Add(2)
	pipe := func(dst, src net.Conn) {
		defer l.wg.Done()
		_, _ = io.Copy(dst, src) // ends when either side closes
		closeBoth()
		l.mu.Lock()
		delete(l.open, client)
		l.mu.Unlock()
	}
	go pipe(server, client)
	go pipe(client, server)
}
