package lease

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// schedule holds the nodes that are waiting for their next turn, earliest
// first, and hands each one out when it is due. A node is either in the
// schedule or with the worker it was handed to, never both: that is what
// lets a node's state go without a lock.
type schedule struct {
	clock clock.WithTicker

	// mu guards queue and every queued node's at and index.
	mu    sync.Mutex
	queue nodeHeap
	// wake is poked (without blocking; capacity 1) when a node is queued
	// or moved ahead of the others, so that run re-arms its timer. Never
	// closed.
	wake chan struct{}
}

func newSchedule(clk clock.WithTicker) *schedule {
	return &schedule{clock: clk, wake: make(chan struct{}, 1)}
}

// add queues n, which no one else holds, for time at.
func (s *schedule) add(n *simNode, at time.Time) {
	s.mu.Lock()
	n.at = at
	heap.Push(&s.queue, n)
	first := n.index == 0
	s.mu.Unlock()
	if first {
		s.poke()
	}
}

// expedite moves n, if it is queued, to now. A node that is with a worker
// is left alone; the caller has flagged what it wants done, and the worker
// will see it.
func (s *schedule) expedite(n *simNode) {
	s.mu.Lock()
	queued := n.index >= 0
	if queued {
		n.at = s.clock.Now()
		heap.Fix(&s.queue, n.index)
	}
	s.mu.Unlock()
	if queued {
		s.poke()
	}
}

func (s *schedule) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// run hands due nodes to out, in due order, until ctx ends; then it closes
// out, which ends the workers ranging over it. It is the only sender on
// out. A due node leaves the queue before it is offered to the workers,
// and goes back if the queue changes while no worker is free.
func (s *schedule) run(ctx context.Context, out chan<- *simNode) {
	defer close(out)
	for {
		due, wait := s.popDue()
		if due != nil {
			select {
			case out <- due:
			case <-s.wake: // something may now be due earlier
				s.add(due, due.at)
			case <-ctx.Done():
				return
			}
			continue
		}
		var timer clock.Timer
		var fire <-chan time.Time
		if wait > 0 {
			timer = s.clock.NewTimer(wait)
			fire = timer.C()
		}
		select {
		case <-fire:
		case <-s.wake:
		case <-ctx.Done():
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// popDue takes the earliest node off the queue if it is due; otherwise it
// returns how long until the earliest one is (0: the queue is empty).
func (s *schedule) popDue() (*simNode, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return nil, 0
	}
	if wait := s.queue[0].at.Sub(s.clock.Now()); wait > 0 {
		return nil, wait
	}
	return heap.Pop(&s.queue).(*simNode), 0
}

// nodeHeap is a min-heap of nodes by due time; each node knows its index
// (-1 when not queued). Callers hold schedule.mu.
type nodeHeap []*simNode

func (h nodeHeap) Len() int           { return len(h) }
func (h nodeHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h nodeHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *nodeHeap) Push(x any) {
	n := x.(*simNode)
	n.index = len(*h)
	*h = append(*h, n)
}
func (h *nodeHeap) Pop() any {
	old := *h
	n := old[len(old)-1]
	old[len(old)-1] = nil
	n.index = -1
	*h = old[:len(old)-1]
	return n
}
