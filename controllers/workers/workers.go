// Package workers is the one way minicp's control loops run their
// workers: a few goroutines, each taking items from the loop's work queue
// until the queue shuts down, as kube-controller-manager's controllers do
// with their --concurrent-*-syncs goroutines.
//
// The loop owns its queue and its informers; this package owns only the
// worker goroutines, and returns once every one of them has ended.
package workers

import (
	"context"
	"sync"
)

// Pool is a set of running workers.
type Pool struct {
	wg sync.WaitGroup
}

// Start starts n workers (at least one), each calling next until it
// reports false: a loop's next takes one item from its queue and reports
// false once the queue is shut down.
func Start(ctx context.Context, n int, next func(context.Context) bool) *Pool {
	p := &Pool{}
	for range max(n, 1) {
		p.wg.Add(1)
		// Each worker ends when next reports false, which is when the
		// loop's queue has been shut down.
		go func() {
			defer p.wg.Done()
			for next(ctx) {
			}
		}()
	}
	return p
}

// Wait returns once every worker has ended.
func (p *Pool) Wait() { p.wg.Wait() }

// Run runs n workers until ctx ends, then calls shutDown (the queue's
// ShutDown, which makes next report false once the queue is drained of
// the item in hand) and returns once every worker has ended.
func Run(ctx context.Context, n int, shutDown func(), next func(context.Context) bool) {
	p := Start(ctx, n, next)
	<-ctx.Done()
	shutDown()
	p.Wait()
}
