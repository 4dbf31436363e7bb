package apiserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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

// serveWithDeadline runs serve with a deadline on its context and answers
// 504 Timeout if it has not started its response when the deadline passes,
// as upstream's timeout filter does. serve runs in its own goroutine so
// that a handler stuck somewhere that ignores its context still gets its
// client an answer; the goroutine is tracked in s.handlers, so Shutdown
// waits for writes that outlive their client's patience. A panic in serve
// is re-raised here, where recoverPanic in serveHTTP catches it.
func (s *Server) serveWithDeadline(w http.ResponseWriter, req *http.Request, serve http.HandlerFunc) {
	timeout, err := requestTimeout(req, s.cfg.RequestTimeout)
	if err != nil {
		writeError(w, req, err)
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
	panicked := make(chan handlerPanic, 1)
	s.handlers.Add(1)
	go func() {
		defer s.handlers.Done()
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				s.passPanic(tw, req, panicked, handlerPanic{value: r, stack: debug.Stack()})
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
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) || !tw.timeOut(req) {
			<-done // serve already started its response: let it finish
		}
	}
	select {
	case p := <-panicked:
		panic(p) // recoverPanic in serveHTTP answers and logs it
	default:
	}
}

// handlerPanic carries a panic out of the handler goroutine, with the
// stack where it happened.
type handlerPanic struct {
	value any
	stack []byte
}

// passPanic hands a panic to serveWithDeadline, or logs it when the
// request has already been answered with 504 and nobody is waiting.
func (s *Server) passPanic(tw *timeoutWriter, req *http.Request, panicked chan<- handlerPanic, p handlerPanic) {
	tw.mu.Lock()
	late := tw.timedOut
	if !late {
		panicked <- p
	}
	tw.mu.Unlock()
	if late {
		s.log.Error("panic serving request after its deadline", "method", req.Method, "path", req.URL.Path, "panic", p.value, "stack", string(p.stack))
	}
}

// timeoutWriter is the ResponseWriter of a handler running under
// serveWithDeadline. Until the deadline it passes writes through; after
// the 504 has been written it drops them.
type timeoutWriter struct {
	w http.ResponseWriter
	// header is the handler's own header map, copied to w on WriteHeader,
	// so the handler goroutine never touches w's headers while
	// serveWithDeadline writes the 504.
	header http.Header

	// mu guards w, wroteHeader and timedOut: the handler goroutine and
	// serveWithDeadline both write through w.
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

// timeOut writes the 504 unless the handler has already started its
// response, and reports whether it did.
func (tw *timeoutWriter) timeOut(req *http.Request) bool {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.wroteHeader {
		return false
	}
	tw.timedOut = true
	endStalledRequest(tw.w, req)
	return true
}

// endStalledRequest answers 504 and closes the connection. The handler
// may be stuck reading a body that stopped arriving; net/http would then
// wait for the rest of that body before the answer leaves, so the answer
// is written whole (with its Content-Length), flushed, and the connection
// taken over and closed, which also ends the stuck read.
func endStalledRequest(w http.ResponseWriter, req *http.Request) {
	var answer bufferedAnswer
	writeError(&answer, req, apierrors.NewTimeoutError(timeoutMessage, 0))
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
