package lease

import (
	"slices"
	"testing"
	"time"
)

func TestSnapshotReportsNearestRankPercentilesAndStartsANewWindow(t *testing.T) {
	var s Stats
	s.Snapshot(t0)
	for i := 100; i >= 1; i-- {
		s.RecordRenewal(time.Duration(i)*time.Millisecond, i == 7)
	}
	s.RecordFailure()
	snap := s.Snapshot(t0.Add(10 * time.Second))
	if snap.P50 != 50*time.Millisecond || snap.P99 != 99*time.Millisecond || snap.MaxLatency != 100*time.Millisecond {
		t.Errorf("percentiles: got p50 %v p99 %v max %v, want 50ms 99ms 100ms", snap.P50, snap.P99, snap.MaxLatency)
	}
	if len(snap.Latencies) != 100 || !slices.IsSorted(snap.Latencies) || Percentile(snap.Latencies, 0.99) != snap.P99 {
		t.Errorf("latencies: got %d, sorted %v; want the window's 100, sorted, giving the same p99", len(snap.Latencies), slices.IsSorted(snap.Latencies))
	}
	if snap.PerSecond() != 10 || snap.Renewals != 100 || snap.Lapses != 1 || snap.Failures != 1 {
		t.Errorf("got %.1f/s, %d renewals, %d lapses, %d failures; want 10/s, 100, 1, 1", snap.PerSecond(), snap.Renewals, snap.Lapses, snap.Failures)
	}
	next := s.Snapshot(t0.Add(15 * time.Second))
	if next.WindowRenewals != 0 || next.Window != 5*time.Second || next.Renewals != 100 {
		t.Errorf("next window: got %d renewals over %v (total %d), want 0 over 5s (total 100)", next.WindowRenewals, next.Window, next.Renewals)
	}
}
