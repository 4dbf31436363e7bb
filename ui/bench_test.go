package ui

import (
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkNodesViewOf5000Nodes measures one /debug/nodes answer for 5,000
// nodes with their Leases (two lists from the cache's memory, the
// counting, one page of etcd lease lookups).
func BenchmarkNodesViewOf5000Nodes(b *testing.B) {
	s := startStack(b)
	var wg sync.WaitGroup
	work := make(chan int)
	for range 32 {
		wg.Add(1)
		go func() { // one writer of nodes; ends when work is closed
			defer wg.Done()
			for i := range work {
				s.node(nodeName(i), corev1.ConditionTrue, 0)
			}
		}()
	}
	for i := range 5000 {
		work <- i
	}
	close(work)
	wg.Wait()
	s.waitCached()
	q := pageQuery{size: defaultPageSize, sort: "renewal"}
	b.ResetTimer()
	for b.Loop() {
		v, err := s.views.nodes(s.ctx, q)
		if err != nil || v.Total != 5000 {
			b.Fatalf("got %d nodes, %v", v.Total, err)
		}
	}
}
