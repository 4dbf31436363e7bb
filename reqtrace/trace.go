package reqtrace

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// Phase is one kind of work a request does.
type Phase int

// The phases, in the order a request usually goes through them.
const (
	// Authentication: who is asking (a bearer token or the live page's
	// session cookie, looked up in memory).
	Authentication Phase = iota
	// Admission: the admission chain (NamespaceLifecycle, ...).
	Admission
	// Storage: registry code outside etcd and cache waits: decoding
	// stored objects, defaulting, validation, selectors.
	Storage
	// CacheWait: waiting for a watch cache to catch up with a
	// resourceVersion before answering from memory.
	CacheWait
	// Etcd: etcd requests, from the apiserver's side (network and etcd).
	Etcd
	// Encoding: encoding the response body.
	Encoding
	numPhases
)

var phaseNames = [numPhases]string{"authentication", "admission", "storage", "cache_wait", "etcd", "encoding"}

// String is the phase's name as logs and the header show it.
func (p Phase) String() string {
	if p < 0 || p >= numPhases {
		return fmt.Sprintf("phase(%d)", int(p))
	}
	return phaseNames[p]
}

// Trace records how long one request spent in each phase.
type Trace struct {
	start time.Time
	now   func() time.Time

	// mu guards every field below: the handler goroutine writes them and
	// the apiserver may snapshot them from another goroutine.
	mu    sync.Mutex
	spent [numPhases]time.Duration
	count [numPhases]int // how many times each phase began
	// stack holds the open phases, innermost last; only the innermost is
	// being charged, since `since`.
	stack []Phase
	since time.Time
}

// New starts a trace now.
func New() *Trace { return newWithClock(time.Now) }

func newWithClock(now func() time.Time) *Trace {
	t := now()
	return &Trace{start: t, since: t, now: now}
}

type ctxKey struct{}

// WithTrace returns ctx carrying t.
func WithTrace(ctx context.Context, t *Trace) context.Context {
	return context.WithValue(ctx, ctxKey{}, t)
}

// From returns the trace in ctx, or nil (a valid, silent trace).
func From(ctx context.Context) *Trace {
	t, _ := ctx.Value(ctxKey{}).(*Trace)
	return t
}

// Begin opens phase p and returns the function that closes it. Until then,
// time is charged to p (and to no outer phase).
func (t *Trace) Begin(p Phase) (end func()) {
	if t == nil {
		return func() {}
	}
	t.mu.Lock()
	t.chargeLocked(t.now())
	t.stack = append(t.stack, p)
	t.count[p]++
	t.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { t.end(p) }) }
}

// end closes the innermost open occurrence of p.
func (t *Trace) end(p Phase) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.chargeLocked(t.now())
	for i := len(t.stack) - 1; i >= 0; i-- {
		if t.stack[i] == p {
			t.stack = append(t.stack[:i], t.stack[i+1:]...)
			return
		}
	}
}

// chargeLocked charges the time since the last change to the innermost
// open phase.
func (t *Trace) chargeLocked(now time.Time) {
	if n := len(t.stack); n > 0 {
		t.spent[t.stack[n-1]] += now.Sub(t.since)
	}
	t.since = now
}

// Summary is a trace read at one instant.
type Summary struct {
	Total time.Duration
	Spent [numPhases]time.Duration
	Count [numPhases]int
	// Open is the innermost phase still running, if any (OpenKnown).
	Open      Phase
	OpenKnown bool
}

// Snapshot reads the trace now, charging the open phase up to now.
func (t *Trace) Snapshot() Summary {
	if t == nil {
		return Summary{}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	s := Summary{Total: now.Sub(t.start), Spent: t.spent, Count: t.count}
	if n := len(t.stack); n > 0 {
		s.Open, s.OpenKnown = t.stack[n-1], true
		s.Spent[s.Open] += now.Sub(t.since)
	}
	return s
}

// Other is the time charged to no phase: routing, decoding the request
// body, waiting to be scheduled.
func (s Summary) Other() time.Duration {
	other := s.Total
	for _, d := range s.Spent {
		other -= d
	}
	return max(other, 0)
}

// String renders the summary on one line, as the Minicp-Phases header
// carries it:
//
//	total=2.004s authentication=1µs admission=0s storage=212µs cache_wait=0s etcd=2.003s(2) encoding=31µs other=402µs
//
// The figure in parentheses is how many times the phase began (for etcd:
// the number of etcd requests); "(open)" marks a phase still running.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "total=%s", round(s.Total))
	for p := Phase(0); p < numPhases; p++ {
		fmt.Fprintf(&b, " %s=%s", p, round(s.Spent[p]))
		if p == Etcd && s.Count[p] > 0 {
			fmt.Fprintf(&b, "(%d)", s.Count[p])
		}
		if s.OpenKnown && s.Open == p {
			b.WriteString("(open)")
		}
	}
	fmt.Fprintf(&b, " other=%s", round(s.Other()))
	return b.String()
}

// Attrs are the summary's figures as structured-log attributes.
func (s Summary) Attrs() []slog.Attr {
	attrs := []slog.Attr{slog.Duration("total", round(s.Total))}
	for p := Phase(0); p < numPhases; p++ {
		attrs = append(attrs, slog.Duration(p.String(), round(s.Spent[p])))
	}
	attrs = append(attrs, slog.Int("etcd_requests", s.Count[Etcd]), slog.Duration("other", round(s.Other())))
	if s.OpenKnown {
		attrs = append(attrs, slog.String("still_in", s.Open.String()))
	}
	return attrs
}

// round keeps three significant-ish digits: microseconds under a
// millisecond, milliseconds under a second's worth of noise.
func round(d time.Duration) time.Duration {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond)
	case d < time.Second:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Millisecond)
}
