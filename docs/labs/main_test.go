package labs

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// TestMain is the labs' test binary, or its reaper (reaper_test.go) when
// started as one.
func TestMain(m *testing.M) {
	if os.Getenv(reaperEnv) == "1" {
		reap(os.Stdin)
		return
	}
	runLabsInParallel()
	startReaper()
	code := m.Run()
	stopReaper()
	os.Exit(code)
}

// labsInParallel is how many labs run at once unless -parallel says
// otherwise. go test's default (GOMAXPROCS) would run two at a time on a
// two-core machine, but a lab spends most of its time waiting (for a lease
// to expire, a compaction, a watch cache's timeout), so four at a time keep
// go test ./... inside its default timeout there.
const labsInParallel = 4

// labGate lets the labs start in the order TestLabs ranks them (the long
// ones first), at most its limit at a time. go test's own limit on
// parallel tests starts waiting tests in no particular order, and a long
// lab started last would run alone at the end.
var labGate = &gate{limit: labsInParallel}

// runLabsInParallel takes -parallel for the labs' gate, and lifts go
// test's own limit so that the gate alone orders them.
func runLabsInParallel() {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if set {
		if n, err := strconv.Atoi(flag.Lookup("test.parallel").Value.String()); err == nil && n > 0 {
			labGate.limit = n
		}
	}
	_ = flag.Set("test.parallel", "1000")
}

// gate admits ranked callers in rank order, limit at a time.
type gate struct {
	mu      sync.Mutex
	cond    *sync.Cond
	limit   int
	ranked  int // ranks handed out
	next    int // the rank admitted next
	running int
}

// rank hands out the next rank; the labs take theirs in page order.
func (g *gate) rank() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ranked++
	return g.ranked - 1
}

// enter waits until every lower rank has entered and fewer than limit
// are inside; the caller must leave.
func (g *gate) enter(rank int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cond == nil {
		g.cond = sync.NewCond(&g.mu)
	}
	for rank != g.next || g.running >= g.limit {
		g.cond.Wait()
	}
	g.next++
	g.running++
	g.cond.Broadcast()
}

func (g *gate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.running--
	if g.cond != nil {
		g.cond.Broadcast()
	}
}

func TestGateAdmitsInRankOrder(t *testing.T) {
	order := runThroughGate(&gate{limit: 1}, 4, nil)
	if fmt.Sprint(order) != "[0 1 2 3]" {
		t.Errorf("entered in order %v, want [0 1 2 3]", order)
	}
}

func TestGateAdmitsAtMostItsLimit(t *testing.T) {
	var inside, most atomic.Int32
	runThroughGate(&gate{limit: 2}, 6, func() {
		n := inside.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		runtime.Gosched() // let the others try to enter meanwhile
		inside.Add(-1)
	})
	if most.Load() > 2 {
		t.Errorf("%d inside at once, want at most 2", most.Load())
	}
}

// runThroughGate ranks n callers, starts them in reverse order (the gate
// must put them back in order), runs inside in each while it is in the
// gate, and returns the ranks in the order they entered.
// runThroughGate ranks n callers, starts them in reverse order (the gate
// must put them back in order), runs inside in each while it is in the
// gate, and returns the ranks in the order they entered.
func runThroughGate(g *gate, n int, inside func()) []int {
	ranks := make([]int, n)
	for i := range ranks {
		ranks[i] = g.rank()
	}
	var (
		mu    sync.Mutex
		order []int
		wg    sync.WaitGroup
	)
	for i := n - 1; i >= 0; i-- {
		wg.Add(1)
		go func(rank int) {
			defer wg.Done()
			g.enter(rank)
			mu.Lock()
			order = append(order, rank)
			mu.Unlock()
			if inside != nil {
				inside()
			}
			g.leave()
		}(ranks[i])
	}
	wg.Wait()
	return order
}
