package workers

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"

	"minicp/internal/testsupport"
)

func TestRunProcessesTheQueueAndReturnsWhenContextEnds(t *testing.T) {
	q := workqueue.NewTyped[int]()
	var done atomic.Int32
	next := func(context.Context) bool {
		item, quit := q.Get()
		if quit {
			return false
		}
		defer q.Done(item)
		done.Add(1)
		return true
	}
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan struct{})
	go func() {
		Run(ctx, 3, q.ShutDown, next)
		close(returned)
	}()
	for i := range 10 {
		q.Add(i)
	}
	testsupport.Eventually(t, 10*time.Second, "the workers to process 10 items", func() bool { return done.Load() == 10 })
	select {
	case <-returned:
		t.Fatal("Run returned before its context ended")
	default:
	}
	cancel()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if !q.ShuttingDown() {
		t.Fatal("Run returned without shutting the queue down")
	}
}
