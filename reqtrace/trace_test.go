package reqtrace

import (
	"context"
	"strings"
	"testing"
	"time"
)

// fakeClock advances only when told to.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestNestedPhasesChargeOnlyTheInnermost(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	tr := newWithClock(clock.now)

	clock.advance(time.Millisecond) // routing: other
	endAdmission := tr.Begin(Admission)
	clock.advance(10 * time.Millisecond)
	endEtcd := tr.Begin(Etcd) // an admission plugin reads etcd
	clock.advance(100 * time.Millisecond)
	endEtcd()
	clock.advance(5 * time.Millisecond)
	endAdmission()
	endEncoding := tr.Begin(Encoding)
	clock.advance(2 * time.Millisecond)
	endEncoding()

	s := tr.Snapshot()
	want := map[Phase]time.Duration{Admission: 15 * time.Millisecond, Etcd: 100 * time.Millisecond, Encoding: 2 * time.Millisecond}
	for p := Phase(0); p < numPhases; p++ {
		if s.Spent[p] != want[p] {
			t.Errorf("%s: got %v, want %v", p, s.Spent[p], want[p])
		}
	}
	if s.Total != 118*time.Millisecond || s.Other() != time.Millisecond {
		t.Errorf("total %v other %v, want 118ms and 1ms", s.Total, s.Other())
	}
	if s.Count[Etcd] != 1 || s.OpenKnown {
		t.Errorf("etcd count %d open %v, want 1 and no open phase", s.Count[Etcd], s.OpenKnown)
	}
}

func TestSnapshotOfARunningRequestChargesTheOpenPhaseUpToNow(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	tr := newWithClock(clock.now)
	end := tr.Begin(Etcd)
	clock.advance(3 * time.Second)

	s := tr.Snapshot()
	if s.Spent[Etcd] != 3*time.Second || !s.OpenKnown || s.Open != Etcd {
		t.Fatalf("got etcd=%v open=%v(%v), want 3s and etcd open", s.Spent[Etcd], s.Open, s.OpenKnown)
	}
	if got := s.String(); !strings.Contains(got, "etcd=3s(1)(open)") {
		t.Errorf("String() = %q, want etcd=3s(1)(open)", got)
	}
	end()
	end() // closing twice changes nothing
	clock.advance(time.Second)
	if s := tr.Snapshot(); s.Spent[Etcd] != 3*time.Second || s.OpenKnown {
		t.Errorf("after end: etcd=%v open=%v, want 3s and nothing open", s.Spent[Etcd], s.OpenKnown)
	}
}

func TestANilTraceRecordsNothing(t *testing.T) {
	tr := From(context.Background())
	tr.Begin(Etcd)()
	if s := tr.Snapshot(); s.Total != 0 {
		t.Errorf("nil trace snapshot: %+v", s)
	}
	ctx := WithTrace(context.Background(), New())
	if From(ctx) == nil {
		t.Error("From lost the trace WithTrace stored")
	}
}
