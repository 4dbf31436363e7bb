package lease

import (
	"math"
	"slices"
	"sync"
	"time"
)

// maxSamples bounds the latencies kept between two snapshots; past it,
// further renewals are counted but their latency is not kept.
const maxSamples = 1 << 20

// Stats counts what the agent's nodes did. Counters only grow; latencies
// are kept per window, between two calls of Snapshot.
type Stats struct {
	// mu guards every field.
	mu         sync.Mutex
	registered int
	renewals   uint64
	failures   uint64
	conflicts  uint64
	lapses     uint64
	statuses   uint64
	window     []time.Duration // latencies of the renewals since the last Snapshot
	windowFrom time.Time
}

// Snapshot is one window of Stats: the counters so far and the renewal
// latencies since the previous snapshot.
type Snapshot struct {
	// Registered is the number of nodes registered so far, each with its
	// Lease written.
	Registered int
	// Renewals, Failures, Conflicts, Lapses and Statuses are totals since
	// start: successful lease writes, failed requests, 409s answered by a
	// re-read, renewals that came later than the lease's duration after
	// the previous one (the lease had lapsed), and node status posts.
	Renewals, Failures, Conflicts, Lapses, Statuses uint64
	// Window is how long the window lasted; WindowRenewals how many
	// renewals it saw, with their latencies' median, 99th percentile and
	// maximum (one lease write request each, as the client saw it).
	Window               time.Duration
	WindowRenewals       int
	P50, P99, MaxLatency time.Duration
	// Latencies are the window's renewal latencies, sorted, for callers
	// that aggregate windows.
	Latencies []time.Duration
}

// PerSecond is the window's renewal rate.
func (s Snapshot) PerSecond() float64 {
	if s.Window <= 0 {
		return 0
	}
	return float64(s.WindowRenewals) / s.Window.Seconds()
}

// RecordRenewal counts one successful renewal that took latency; lapsed
// says it came more than the lease's duration after the previous one.
// The agent calls it; so may other renewers that want the same report.
func (s *Stats) RecordRenewal(latency time.Duration, lapsed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.renewals++
	if lapsed {
		s.lapses++
	}
	if len(s.window) < maxSamples {
		s.window = append(s.window, latency)
	}
}

// RecordFailure counts one failed request.
func (s *Stats) RecordFailure() { s.add(&s.failures) }

// RecordConflict counts one 409 (or failed compare) answered by a re-read.
func (s *Stats) RecordConflict() { s.add(&s.conflicts) }

func (s *Stats) add(counter *uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*counter++
}

func (s *Stats) nodeRegistered() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.registered++
}

// Snapshot returns the totals and the window since the previous call (or
// since start), and starts a new window at now.
func (s *Stats) Snapshot(now time.Time) Snapshot {
	s.mu.Lock()
	window, from := s.window, s.windowFrom
	snap := Snapshot{
		Registered: s.registered, Renewals: s.renewals, Failures: s.failures,
		Conflicts: s.conflicts, Lapses: s.lapses, Statuses: s.statuses,
	}
	s.window, s.windowFrom = nil, now
	s.mu.Unlock()

	if !from.IsZero() {
		snap.Window = now.Sub(from)
	}
	snap.WindowRenewals = len(window)
	snap.Latencies = window
	if len(window) > 0 {
		slices.Sort(window)
		snap.P50 = percentile(window, 0.50)
		snap.P99 = percentile(window, 0.99)
		snap.MaxLatency = window[len(window)-1]
	}
	return snap
}

// Percentile returns the nearest-rank percentile p (0 < p <= 1) of sorted
// samples, 0 for none.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return percentile(sorted, p)
}

// percentile returns the nearest-rank percentile p of sorted samples.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
