package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"minicp/lease"
)

// reporter prints one line per report interval and a summary at the end.
// Windows before the steady state (every node registered, then one more
// renewal interval, so the registration burst is over) are printed but
// left out of the summary's latencies.
type reporter struct {
	out   io.Writer
	cfg   *config
	etcd  *clientv3.Client // nil: no etcd figures
	start time.Time
	cpu0  time.Duration

	steadyFrom     time.Time       // zero until every node is registered
	steadyP99s     []time.Duration // window p99s in the steady state
	steadyLatency  []time.Duration // every renewal latency in the steady state
	steadyRenewals int
	steadyTime     time.Duration
	steadyLapses   uint64 // lapses counted before the steady state began
	etcd0, etcdN   etcdFigures
}

type etcdFigures struct {
	at       time.Time
	revision int64
	dbSize   int64
	ok       bool
}

func newReporter(out io.Writer, cfg *config, etcd *clientv3.Client) *reporter {
	r := &reporter{out: out, cfg: cfg, etcd: etcd, start: time.Now(), cpu0: cpuTime()}
	r.etcd0 = r.etcdNow()
	return r
}

// loop prints a line every report interval until ctx ends.
func (r *reporter) loop(ctx context.Context, snapshot func() lease.Snapshot) {
	snapshot() // start the first window now
	tick := time.NewTicker(r.cfg.reportEvery)
	defer tick.Stop()
	lastCPU, lastAt := r.cpu0, r.start
	prevEtcd := r.etcd0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		s := snapshot()
		now, cpu := time.Now(), cpuTime()
		e := r.etcdNow()
		line := fmt.Sprintf("%6s  registered %d/%d  renewals %7.1f/s  p50 %-7s p99 %-7s max %-7s failures %d  conflicts %d  lapses %d  cpu %3.0f%%",
			now.Sub(r.start).Round(time.Second), s.Registered, r.cfg.agent.Nodes, s.PerSecond(),
			ms(s.P50), ms(s.P99), ms(s.MaxLatency), s.Failures, s.Conflicts, s.Lapses,
			100*float64(cpu-lastCPU)/float64(now.Sub(lastAt)))
		if e.ok && prevEtcd.ok {
			line += fmt.Sprintf("  etcd +%.0f rev/s db %s", float64(e.revision-prevEtcd.revision)/e.at.Sub(prevEtcd.at).Seconds(), mib(e.dbSize))
		}
		fmt.Fprintln(r.out, line)
		r.track(s, now)
		lastCPU, lastAt, prevEtcd = cpu, now, e
	}
}

// track adds a window to the steady-state figures once it has begun.
func (r *reporter) track(s lease.Snapshot, now time.Time) {
	if r.steadyFrom.IsZero() {
		if s.Registered == r.cfg.agent.Nodes {
			r.steadyFrom = now.Add(r.cfg.agent.LeaseDuration / 4)
			r.steadyLapses = s.Lapses
		}
		return
	}
	if now.Sub(r.steadyFrom) < s.Window { // window began before the steady state
		r.steadyLapses = s.Lapses
		return
	}
	if r.steadyTime == 0 {
		r.etcd0 = r.etcdNow()
	}
	r.steadyP99s = append(r.steadyP99s, s.P99)
	r.steadyLatency = append(r.steadyLatency, s.Latencies...)
	r.steadyRenewals += s.WindowRenewals
	r.steadyTime += s.Window
}

// summary prints the run's totals and its steady state.
func (r *reporter) summary(s lease.Snapshot) {
	wall := time.Since(r.start)
	r.etcdN = r.etcdNow()
	fmt.Fprintf(r.out, "summary: %s, %d nodes, %d renewals, %d failures, %d conflicts, %d lapses in total; kubelet-sim CPU %.0f%% of one core\n",
		wall.Round(time.Second), r.cfg.agent.Nodes, s.Renewals, s.Failures, s.Conflicts, s.Lapses,
		100*float64(cpuTime()-r.cpu0)/float64(wall))
	if len(r.steadyP99s) == 0 {
		fmt.Fprintln(r.out, "steady state: not reached (run longer than registration plus one renewal interval)")
		return
	}
	p99s := slices.Clone(r.steadyP99s)
	slices.Sort(p99s)
	slices.Sort(r.steadyLatency)
	fmt.Fprintf(r.out, "steady state: %d windows, %.1f renewals/s, p50 %s p99 %s (window p99 median %s, worst %s), lapses %d\n",
		len(p99s), float64(r.steadyRenewals)/r.steadyTime.Seconds(),
		ms(lease.Percentile(r.steadyLatency, 0.50)), ms(lease.Percentile(r.steadyLatency, 0.99)),
		ms(p99s[len(p99s)/2]), ms(p99s[len(p99s)-1]), s.Lapses-r.steadyLapses)
	if r.etcd0.ok && r.etcdN.ok {
		minutes := r.etcdN.at.Sub(r.etcd0.at).Minutes()
		fmt.Fprintf(r.out, "etcd in the steady state: %.0f revisions/s, db %s -> %s (%+.2f MiB/min)\n",
			float64(r.etcdN.revision-r.etcd0.revision)/(minutes*60), mib(r.etcd0.dbSize), mib(r.etcdN.dbSize),
			float64(r.etcdN.dbSize-r.etcd0.dbSize)/(1<<20)/minutes)
	}
}

// etcdNow reads the revision and database size of the first endpoint.
func (r *reporter) etcdNow() etcdFigures {
	if r.etcd == nil {
		return etcdFigures{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := r.etcd.Status(ctx, r.etcd.Endpoints()[0])
	if err != nil {
		return etcdFigures{}
	}
	return etcdFigures{at: time.Now(), revision: st.Header.Revision, dbSize: st.DbSize, ok: true}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }

func mib(n int64) string { return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20)) }
