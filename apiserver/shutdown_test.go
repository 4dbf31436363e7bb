package apiserver

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"minicp/internal/testsupport"
	"minicp/kinds"
)

// A connection on which no request has arrived does not hold Shutdown:
// net/http would count it as busy for 5 seconds, longer than a stop may
// take. A client-go transport leaves such connections behind when a
// request is cancelled while its connection is being dialled.
func TestShutdownClosesConnectionsThatCarryNoRequest(t *testing.T) {
	s := startListening(t, newFakeStore())
	watchAllPods(t, s)
	unused, err := net.Dial("tcp", strings.TrimPrefix(s.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer unused.Close()
	testsupport.Eventually(t, 5*time.Second, "the unused connection to be open", func() bool {
		s.conns.mu.Lock()
		defer s.conns.mu.Unlock()
		return len(s.conns.unused) == 1
	})

	// Well below net/http's 5 seconds: before the unused connection was
	// closed, Shutdown ran out of this deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: got %v, want nil", err)
	}
	if err := unused.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := unused.Read(make([]byte, 1)); !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !isConnReset(err) {
		t.Errorf("reading the unused connection after Shutdown: got %v, want it closed (EOF)", err)
	}
}

// isConnReset reports whether err is a reset by the peer.
func isConnReset(err error) bool {
	return err != nil && !errors.Is(err, os.ErrDeadlineExceeded) && strings.Contains(err.Error(), "connection reset")
}

// A CPU profile runs for its seconds; Shutdown ends it early, and the
// client gets the profile taken so far.
func TestShutdownEndsACPUProfileEarly(t *testing.T) {
	s := startListening(t, newFakeStore())
	type answer struct {
		code int
		err  error
	}
	profile := func() <-chan answer { // the profile request's result
		answered := make(chan answer, 1)
		go func() {
			resp, err := http.Get(s.URL() + "/debug/pprof/profile?seconds=50")
			if err != nil {
				answered <- answer{err: err}
				return
			}
			defer resp.Body.Close()
			_, err = io.Copy(io.Discard, resp.Body)
			answered <- answer{code: resp.StatusCode, err: err}
		}()
		return answered
	}
	answered := profile()
	// The runtime allows one CPU profile at a time: once ours cannot
	// start, the request's is running. A request that came while ours
	// ran could not start its own and answered 500 at once: ask again.
	testsupport.Eventually(t, 10*time.Second, "the CPU profile to start", func() bool {
		select {
		case a := <-answered:
			if a.err != nil || a.code != http.StatusInternalServerError {
				t.Fatalf("the profile request ended before Shutdown: got %d (%v)", a.code, a.err)
			}
			answered = profile()
			return false
		default:
		}
		if err := pprof.StartCPUProfile(io.Discard); err == nil {
			pprof.StopCPUProfile()
			return false
		}
		return true
	})

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: got %v, want nil", err)
	}
	if a := <-answered; a.err != nil || a.code != http.StatusOK {
		t.Errorf("the profile request: got %d (%v), want 200 with the profile so far", a.code, a.err)
	}
}

// A server follows its resource table (discovery, OpenAPI) until it shuts
// down; then the table no longer holds it, so a table that outlives its
// servers (every test here shares one) does not keep them all.
func TestShutdownStopsFollowingTheResourceTable(t *testing.T) {
	table := kinds.NewTable()
	s, err := New(NewConfig(), table, newFakeStore(), nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if got := table.Subscribers(); got != 2 {
		t.Fatalf("a new server: the table has %d subscribers, want 2 (discovery and OpenAPI)", got)
	}
	if err := s.Shutdown(testContext(t)); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if got := table.Subscribers(); got != 0 {
		t.Errorf("after Shutdown: the table has %d subscribers, want 0", got)
	}
}
