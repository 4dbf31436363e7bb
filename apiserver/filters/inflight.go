package filters

import (
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// In-flight limits, upstream's --max-requests-inflight (400) and
// --max-mutating-requests-inflight (200): at most that many reads and
// writes are served at once; one more is answered at once with 429
// TooManyRequests and Retry-After: 1, which client-go honours by waiting
// and retrying. Without a limit, every concurrent LIST from etcd holds its
// whole answer in memory at once, and a burst of them can exhaust it.
//
// As upstream, long-running requests do not count (watches, which hold
// their slot for minutes, and /debug/pprof/ profiles), and members of
// system:masters are never refused. minicp also never refuses the health
// endpoints, so that a probe tells "busy" from "down".

// retryAfterSeconds is upstream's Retry-After for a refused request.
const retryAfterSeconds = 1

// InflightLimiter holds one semaphore per kind of request. A nil channel
// means no limit.
type InflightLimiter struct {
	// reads and writes hold one token per request being served; a full
	// channel means the limit is reached. Never closed.
	reads, writes chan struct{}
}

// NewInflightLimiter limits reads and writes in flight; 0 is no limit.
func NewInflightLimiter(reads, writes int) *InflightLimiter {
	l := &InflightLimiter{}
	if reads > 0 {
		l.reads = make(chan struct{}, reads)
	}
	if writes > 0 {
		l.writes = make(chan struct{}, writes)
	}
	return l
}

// acquire takes a slot for req, or returns the 429 to answer with. The
// caller calls release when the request is done. A long-running request
// (a watch, a profile) takes none; a mutating one counts against the
// write limit.
func (l *InflightLimiter) acquire(req *http.Request, longRunning, mutating bool) (release func(), err error) {
	path := req.URL.Path
	if longRunning || isUnder(path, "/healthz") || isUnder(path, "/livez") || isUnder(path, "/readyz") {
		return func() {}, nil
	}
	sem := l.reads
	if mutating {
		sem = l.writes
	}
	if sem == nil {
		return func() {}, nil
	}
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, nil
	default:
	}
	if u := UserFrom(req.Context()); u != nil && u.InGroup(GroupMasters) {
		return func() {}, nil
	}
	return nil, apierrors.NewTooManyRequests("too many requests are in flight (--max-requests-inflight "+
		"and --max-mutating-requests-inflight): retry after the time given in Retry-After", retryAfterSeconds)
}

// SetRetryAfter copies a Status's retry delay into the Retry-After header,
// as upstream's error responses do.
func SetRetryAfter(w http.ResponseWriter, err error) {
	if status, ok := err.(apierrors.APIStatus); ok {
		if d := status.Status().Details; d != nil && d.RetryAfterSeconds > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(d.RetryAfterSeconds)))
		}
	}
}
