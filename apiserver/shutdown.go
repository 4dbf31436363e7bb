package apiserver

// How the server stops. net/http's Server.Shutdown closes the listeners,
// then waits until every connection it holds is idle, closing idle ones as
// it goes. Two kinds of connection are never idle on their own:
//
//   - A connection with a long-running request on it: a watch streams
//     until its timeoutSeconds, half an hour by default; a CPU profile or
//     an execution trace (--profiling) runs for its seconds. Shutdown
//     cancels the server-wide stopping context first, and these requests
//     derive their context from it (untilShutdown), so each watch stream
//     ends (a complete chunked response) and stops its registry watch, and
//     a profile ends early with what it has.
//   - A connection that has not yet carried a request: net/http counts it
//     as busy until it has been quiet for 5 seconds, which is as long as
//     minicp gives shutdown in all. Clients open such connections all the
//     time: client-go's transport keeps the connection it dialled for a
//     request that was cancelled meanwhile (an informer stopping as its
//     watch starts), and browsers open spare ones in advance. Shutdown
//     closes them at once: no request on them has been read, so none is
//     lost (one whose headers were still arriving is dropped unanswered,
//     as one arriving after the listener closed would be).
//
// Everything else (a write in flight, a LIST) runs to its end, so that an
// acknowledged write is in etcd before the caller closes etcd; when the
// caller's deadline passes first, the connections left are closed.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
)

// Shutdown stops the server gracefully, in this order:
//  1. stop accepting connections (the listeners close);
//  2. cancel the stopping context: every open watch ends, and new ones
//     are refused; close every connection that carries no request;
//  3. wait for in-flight requests, including handlers that outlived
//     their deadline, so that every write finishes, or until ctx ends,
//     then close whatever connections are left;
//  4. stop following the resource table: discovery and OpenAPI
//     unsubscribe, so that a table that outlives the server (one
//     process may run many stacks) no longer holds them;
//  5. return.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	srv := s.httpServer
	s.mu.Unlock()
	var err error
	if srv != nil {
		err = srv.Shutdown(ctx) // steps 1-3 for requests on connections
		if err != nil {
			// ctx ended with requests still open: cut them off, so that
			// none outlives the storage the caller closes next. Close's
			// only error is the listeners', closed already.
			_ = srv.Close()
		}
		s.mu.Lock()
		// The TLS and plain listeners of a split share the socket: the
		// first to close closes it, the others find it closed.
		err = errors.Join(ignoreClosed(err), ignoreClosed(s.listener.Close()))
		s.mu.Unlock()
	}
	s.stopLongRunning() // step 2 when the server was never started
	finished := make(chan struct{})
	// This goroutine ends when the last handler goroutine does; if ctx
	// ends first, it outlives Shutdown and ends when they do.
	go func() {
		s.timeouts.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-ctx.Done():
		err = errors.Join(err, fmt.Errorf("apiserver: requests still running at shutdown: %w", ctx.Err()))
	}
	s.resources.Unsubscribe(s.discovery)
	s.resources.Unsubscribe(s.openapi)
	return err
}

// stopLongRunning is step 2 of Shutdown. net/http runs it once it has
// closed the listeners, before it waits for open requests.
func (s *Server) stopLongRunning() {
	s.endWatches()
	s.conns.closeUnused()
}

// untilShutdown returns a context that ends with parent or when the
// server shuts down, whichever comes first: the context of a long-running
// request.
func (s *Server) untilShutdown(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	stop := context.AfterFunc(s.stopping, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

// endsAtShutdown serves h with a request context from untilShutdown.
func (s *Server) endsAtShutdown(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx, cancel := s.untilShutdown(req.Context())
		defer cancel()
		h.ServeHTTP(w, req.WithContext(ctx))
	})
}

// ignoreClosed drops the error of closing a listener already closed.
func ignoreClosed(err error) error {
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// connStates follows the state of every connection the HTTP server holds
// (its ConnState hook), to find those that never carried a request.
type connStates struct {
	// mu guards unused and closing. track runs on net/http's serving and
	// connection goroutines, closeUnused on Shutdown's.
	mu sync.Mutex
	// unused holds the connections in http.StateNew: accepted, perhaps
	// mid-handshake, with no request read from them yet.
	unused map[net.Conn]struct{}
	// closing is set by closeUnused: from then on a connection is closed
	// as soon as it is seen new.
	closing bool
}

func newConnStates() *connStates { return &connStates{unused: map[net.Conn]struct{}{}} }

// track is the http.Server's ConnState hook. A connection leaves StateNew
// once the headers of its first request have been read.
func (c *connStates) track(conn net.Conn, state http.ConnState) {
	c.mu.Lock()
	closeNow := state == http.StateNew && c.closing
	switch {
	case state != http.StateNew:
		delete(c.unused, conn)
	case !c.closing:
		c.unused[conn] = struct{}{}
	}
	c.mu.Unlock()
	if closeNow {
		_ = conn.Close() // shutting down: nothing will be asked on it
	}
}

// closeUnused closes every connection that has not carried a request, and
// every one accepted from now on. The closes happen outside mu: closing a
// TLS connection writes its close_notify alert.
func (c *connStates) closeUnused() {
	c.mu.Lock()
	c.closing = true
	unused := c.unused
	c.unused = map[net.Conn]struct{}{}
	c.mu.Unlock()
	for conn := range unused {
		_ = conn.Close() // net/http's connection goroutine sees the close and ends
	}
}
