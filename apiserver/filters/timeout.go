package filters

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// requestTimeout is how long a request may take: the server's limit, or
// less when the client asks with ?timeout= (a Go duration, e.g. "5s"). A
// value that does not parse is 400 BadRequest, as upstream answers.
func requestTimeout(req *http.Request, limit time.Duration) (time.Duration, error) {
	value := req.URL.Query().Get("timeout")
	if value == "" {
		return limit, nil
	}
	timeout, err := time.ParseDuration(value)
	if err != nil {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid timeout specified in the request URL - %v", err))
	}
	if timeout > 0 && timeout < limit {
		return timeout, nil
	}
	return limit, nil
}

// TimeoutMessage is upstream's message for a request cut off by its deadline.
const TimeoutMessage = "request did not complete within requested timeout - context deadline exceeded"

// Timeouts put every request but a watch under a deadline, as upstream's
// timeout filter does.
type Timeouts struct {
	// Limit is the longest a request may take (--request-timeout).
	Limit time.Duration
	// Log receives panics of handlers that outlived their 504.
	Log *slog.Logger
	// WriteError answers a request with the Status an error carries.
	WriteError func(http.ResponseWriter, *http.Request, error)

	// handlers tracks the goroutines Serve starts; Wait waits for them
	// so that no write is cut off half-way.
	handlers sync.WaitGroup
}

// Wait returns when every handler Serve started has returned.
func (t *Timeouts) Wait() { t.handlers.Wait() }

// Serve runs serve with a deadline on its context and answers 504 Timeout
// if it has not started its response when the deadline passes, as
// upstream's timeout filter does. serve runs in its own goroutine so that
// a handler stuck somewhere that ignores its context still gets its client
// an answer; the goroutine is tracked, so that shutdown waits (Wait) for
// writes that outlive their client's patience. A panic in serve is
// re-raised here as a HandlerPanic, for the server's panic recovery.
func (t *Timeouts) Serve(w http.ResponseWriter, req *http.Request, serve http.HandlerFunc) {
	timeout, err := requestTimeout(req, t.Limit)
	if err != nil {
		t.WriteError(w, req, err)
		return
	}
	ctx, cancel := context.WithTimeout(req.Context(), timeout)
	defer cancel()
	req = req.WithContext(ctx)

	tw := &timeoutWriter{w: w, header: make(http.Header)}
	// done is closed by the handler goroutine when serve returns.
	// panicked receives (buffered, at most once, before done is closed)
	// what serve panicked with, unless the 504 was already sent.
	done := make(chan struct{})
	panicked := make(chan HandlerPanic, 1)
	t.handlers.Add(1)
	go func() {
		defer t.handlers.Done()
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				t.passPanic(tw, req, panicked, HandlerPanic{Value: r, Stack: debug.Stack()})
			}
		}()
		serve(tw, req)
	}()

	select {
	case <-done:
	case <-ctx.Done():
		// Only the deadline is answered here. When the client went away
		// (the context was cancelled), serve sees the same cancellation
		// and returns on its own.
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) || !t.timeOut(tw, req) {
			<-done // serve already started its response: let it finish
		}
	}
	select {
	case p := <-panicked:
		panic(p) // the server's panic recovery answers and logs it
	default:
	}
}

// HandlerPanic carries a panic out of the handler goroutine, with the
// stack where it happened.
type HandlerPanic struct {
	Value any
	Stack []byte
}

// passPanic hands a panic to Serve, or logs it when the
// request has already been answered with 504 and nobody is waiting.
func (t *Timeouts) passPanic(tw *timeoutWriter, req *http.Request, panicked chan<- HandlerPanic, p HandlerPanic) {
	tw.mu.Lock()
	late := tw.timedOut
	if !late {
		panicked <- p
	}
	tw.mu.Unlock()
	if late {
		t.Log.Error("panic serving request after its deadline", "method", req.Method, "path", req.URL.Path, "panic", p.Value, "stack", string(p.Stack))
	}
}

// timeoutWriter is the ResponseWriter of a handler running under
// Serve. Until the deadline it passes writes through; after
// the 504 has been written it drops them.
type timeoutWriter struct {
	w http.ResponseWriter
	// header is the handler's own header map, copied to w on WriteHeader,
	// so the handler goroutine never touches w's headers while
	// Serve writes the 504.
	header http.Header

	// mu guards w, wroteHeader and timedOut: the handler goroutine and
	// Serve both write through w.
	mu          sync.Mutex
	wroteHeader bool
	timedOut    bool
}

func (tw *timeoutWriter) Header() http.Header { return tw.header }

func (tw *timeoutWriter) WriteHeader(code int) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	tw.writeHeaderLocked(code)
}

func (tw *timeoutWriter) writeHeaderLocked(code int) {
	if tw.timedOut || tw.wroteHeader {
		return
	}
	tw.wroteHeader = true
	dst := tw.w.Header()
	for k, v := range tw.header {
		dst[k] = v
	}
	tw.w.WriteHeader(code)
}

func (tw *timeoutWriter) Write(p []byte) (int, error) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return 0, http.ErrHandlerTimeout
	}
	tw.writeHeaderLocked(http.StatusOK)
	return tw.w.Write(p)
}

// timeOut writes the 504 on tw unless the handler has already started
// its response, and reports whether it did.
func (t *Timeouts) timeOut(tw *timeoutWriter, req *http.Request) bool {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.wroteHeader {
		return false
	}
	tw.timedOut = true
	t.endStalledRequest(tw.w, req)
	return true
}

// endStalledRequest answers 504 and closes the connection. The handler
// may be stuck reading a body that stopped arriving; net/http would then
// wait for the rest of that body before the answer leaves, so the answer
// is written whole (with its Content-Length), flushed, and the connection
// taken over and closed, which also ends the stuck read.
func (t *Timeouts) endStalledRequest(w http.ResponseWriter, req *http.Request) {
	var answer bufferedAnswer
	t.WriteError(&answer, req, apierrors.NewTimeoutError(TimeoutMessage, 0))
	for k, v := range answer.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(answer.body.Len()))
	w.Header().Set("Connection", "close")
	w.WriteHeader(answer.code)
	_, _ = w.Write(answer.body.Bytes()) // the client went away: the close below is all that is left
	rc := http.NewResponseController(w)
	if err := rc.Flush(); err != nil {
		return // not a connection (a test's recorder)
	}
	if conn, _, err := rc.Hijack(); err == nil {
		_ = conn.Close() // the answer is flushed; nothing more goes on this connection
	}
}

// bufferedAnswer is a ResponseWriter that keeps what is written.
type bufferedAnswer struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (a *bufferedAnswer) Header() http.Header {
	if a.header == nil {
		a.header = http.Header{}
	}
	return a.header
}
func (a *bufferedAnswer) WriteHeader(code int)        { a.code = code }
func (a *bufferedAnswer) Write(p []byte) (int, error) { return a.body.Write(p) }
