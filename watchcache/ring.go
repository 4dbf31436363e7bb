package watchcache

import "sort"

// ring is the window of recent events: a circular buffer of fixed capacity.
//
// Invariant: indices only grow. The events held are exactly those with an
// index in the half-open interval [start, end), event i stored at
// buf[i % len(buf)]; so end-start events are held and end-start <= len(buf).
// Pushing onto a full ring evicts the event at start first.
//
// floor is the window's lower bound in revisions: every event of the
// resource with a revision greater than floor is in the ring. After a
// (re)list at revision R, floor is R; each eviction raises it to the
// evicted event's revision. A watch may therefore start from any
// resourceVersion >= floor; older ones get 410.
//
// The ring is not safe for concurrent use: resourceCache.mu guards it.
type ring struct {
	buf        []*event
	start, end uint64
	floor      int64
}

func newRing(capacity int) *ring { return &ring{buf: make([]*event, capacity)} }

func (r *ring) capacity() int { return len(r.buf) }
func (r *ring) len() int      { return int(r.end - r.start) }

// at returns the event at index i, which must be in [start, end).
func (r *ring) at(i uint64) *event { return r.buf[i%uint64(len(r.buf))] }

// push appends e, evicting the oldest event if the ring is full.
func (r *ring) push(e *event) {
	if r.len() == len(r.buf) {
		slot := r.start % uint64(len(r.buf))
		r.floor = r.buf[slot].rv
		r.buf[slot] = nil
		r.start++
	}
	r.buf[r.end%uint64(len(r.buf))] = e
	r.end++
}

// reset empties the ring after a list at revision rev: the window now
// starts there. Indices keep growing.
func (r *ring) reset(rev int64) {
	for i := r.start; i < r.end; i++ {
		r.buf[i%uint64(len(r.buf))] = nil
	}
	r.start = r.end
	r.floor = rev
}

// after returns, oldest first, every held event with a revision greater
// than rev. ok is false when rev is older than the window (events after rev
// have been evicted).
func (r *ring) after(rev int64) (events []*event, ok bool) {
	if rev < r.floor {
		return nil, false
	}
	n := r.len()
	first := sort.Search(n, func(i int) bool { return r.at(r.start+uint64(i)).rv > rev })
	events = make([]*event, 0, n-first)
	for i := r.start + uint64(first); i < r.end; i++ {
		events = append(events, r.at(i))
	}
	return events, true
}

// oldest and newest return the revisions of the first and last events
// held, or 0 when the ring is empty.
func (r *ring) oldest() int64 {
	if r.len() == 0 {
		return 0
	}
	return r.at(r.start).rv
}

func (r *ring) newest() int64 {
	if r.len() == 0 {
		return 0
	}
	return r.at(r.end - 1).rv
}
