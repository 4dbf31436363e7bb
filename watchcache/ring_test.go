package watchcache

import (
	"fmt"
	"testing"
)

func revisions(events []*event) string {
	out := ""
	for _, e := range events {
		out += fmt.Sprintf("%d,", e.rv)
	}
	return out
}

// The window invariant: indices only grow, the events held are exactly
// [start, end) at index % capacity, and every event after floor is held.
func TestRingWrapsAroundKeepingItsHalfOpenInterval(t *testing.T) {
	r := newRing(3)
	r.reset(5) // listed at revision 5
	if _, ok := r.after(4); ok {
		t.Fatal("after(4) of a window that starts at 5: ok, want too old")
	}
	if got, ok := r.after(5); !ok || len(got) != 0 {
		t.Fatalf("after(5) of an empty window = %v %v, want nothing, ok", got, ok)
	}
	for rv := int64(10); rv <= 70; rv += 10 { // 7 pushes into 3 slots: wraps twice
		r.push(&event{rv: rv})
		held := min(int((rv-10)/10)+1, 3)
		if r.len() != held || r.end-r.start != uint64(held) {
			t.Fatalf("after pushing %d: len %d, [start, end) = [%d, %d), want %d held", rv, r.len(), r.start, r.end, held)
		}
	}
	if r.start != 4 || r.end != 7 {
		t.Errorf("[start, end) = [%d, %d), want [4, 7)", r.start, r.end)
	}
	if r.floor != 40 || r.oldest() != 50 || r.newest() != 70 {
		t.Errorf("floor %d, oldest %d, newest %d; want 40, 50, 70", r.floor, r.oldest(), r.newest())
	}
	for i := r.start; i < r.end; i++ {
		if got, want := r.at(i).rv, int64(i+1)*10; got != want {
			t.Errorf("index %d (slot %d) holds %d, want %d", i, i%3, got, want)
		}
	}
	for _, tc := range []struct {
		after int64
		want  string
		ok    bool
	}{
		{39, "", false},         // 40 was evicted: a watch from 39 would miss it
		{40, "50,60,70,", true}, // the floor itself is fine
		{45, "50,60,70,", true}, // between events
		{60, "70,", true},
		{70, "", true},
		{99, "", true}, // the future: nothing yet
	} {
		got, ok := r.after(tc.after)
		if ok != tc.ok || revisions(got) != tc.want {
			t.Errorf("after(%d) = %q %v, want %q %v", tc.after, revisions(got), ok, tc.want, tc.ok)
		}
	}
	r.reset(80) // a re-list: the window restarts, indices keep growing
	if r.len() != 0 || r.start != 7 || r.floor != 80 {
		t.Errorf("after reset: len %d, start %d, floor %d; want 0, 7, 80", r.len(), r.start, r.floor)
	}
	for _, e := range r.buf {
		if e != nil {
			t.Errorf("reset kept event %d: it would never be collected", e.rv)
		}
	}
	r.push(&event{rv: 90})
	if got, ok := r.after(80); !ok || revisions(got) != "90," {
		t.Errorf("after(80) = %q %v, want \"90,\" true", revisions(got), ok)
	}
}

// Several events may share a revision (etcd deletes every key of an
// expired lease in one revision): evicting one of them must make a watch
// from just before that revision too old, not silently lose its siblings.
func TestRingFloorCoversEventsSharingARevision(t *testing.T) {
	r := newRing(2)
	r.reset(1)
	for _, rv := range []int64{5, 5, 6} {
		r.push(&event{rv: rv})
	}
	if _, ok := r.after(4); ok {
		t.Error("after(4) = ok, but one of the two events at 5 was evicted")
	}
	if got, ok := r.after(5); !ok || revisions(got) != "6," {
		t.Errorf("after(5) = %q %v, want \"6,\" true", revisions(got), ok)
	}
}
