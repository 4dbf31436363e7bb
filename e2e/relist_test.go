package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"minicp/controlplane"
	"minicp/e2e/framework"
	"minicp/embedetcd"
	"minicp/relist"
)

// stormScenario is one row of the relist storm table.
type stormScenario struct {
	name string
	// cacheWindow is the watch cache's window for ConfigMaps, in events;
	// 0 turns the cache off (--watch-cache=false).
	cacheWindow int
	// compactionInterval is the apiserver's --etcd-compaction-interval.
	compactionInterval time.Duration
	// waitForCompaction makes the informers stay away until etcd is
	// compacted past the last write: history shorter than the disconnect.
	waitForCompaction bool
	wantRelists       bool
}

const (
	stormInformers   = 5
	stormExisting    = 200
	stormObjects     = 50
	stormObjectBytes = 512
)

// M6 and M8: informers away for longer than the
// history they resume from come back to 410 Gone and fetch the whole state
// again; away for less, they get only what they missed. Without the watch
// cache that history is etcd's, cut by compaction; with it, it is the
// cache's window, whatever etcd compacts. The figures (relists, bytes
// served, time to catch up) are logged for the lab.
func TestRelistStormHappensOnlyWhenTheHistoryIsGoneAfterTheDisconnect(t *testing.T) {
	for _, sc := range []stormScenario{
		{name: "cache off, etcd keeps history longer than the disconnect: informers resume",
			compactionInterval: time.Hour},
		{name: "cache off, etcd compacted during the disconnect: informers relist",
			compactionInterval: 50 * time.Millisecond, waitForCompaction: true, wantRelists: true},
		{name: "cache on, etcd compacted during the disconnect, the window holds the writes: informers resume",
			cacheWindow: 1000, compactionInterval: 50 * time.Millisecond, waitForCompaction: true},
		{name: "cache on, more writes than the window holds, etcd not compacted: informers relist",
			cacheWindow: stormObjects / 2, compactionInterval: time.Hour, wantRelists: true},
	} {
		t.Run(sc.name, func(t *testing.T) { runStormScenario(t, sc) })
	}
}

func runStormScenario(t *testing.T, sc stormScenario) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.EtcdCompactionInterval = sc.compactionInterval
		c.WatchCache.Enabled = sc.cacheWindow > 0
		c.WatchCache.Sizes["configmaps"] = sc.cacheWindow
		// Its own informers relist too when etcd compacts under them,
		// and would be counted with the storm's.
		c.EnableGarbageCollector = false
	}})
	ctx := framework.Context(t, 2*time.Minute)
	cfg := relist.StormConfig{
		Informers: stormInformers, Existing: stormExisting, Objects: stormObjects, ObjectBytes: stormObjectBytes,
		Disconnect: 200 * time.Millisecond, ResyncTimeout: time.Minute,
	}
	if sc.waitForCompaction {
		cfg.AfterWrites = func(ctx context.Context, last int64) error {
			return waitCompactedTo(ctx, s, last)
		}
	}
	report, err := relist.RunStorm(ctx, s.RESTConfig, cfg)
	if err != nil {
		t.Fatalf("RunStorm: %v", err)
	}
	logStorm(t, report)

	compacted, err := embedetcd.CompactedRevision(ctx, s.Etcd)
	if err != nil {
		t.Fatal(err)
	}
	if cutAt := revision(t, report.CutAt); sc.waitForCompaction != (compacted > cutAt+1) {
		t.Fatalf("etcd compacted to %d with informers cut off at %s: the scenario did not set up what it names", compacted, report.CutAt)
	}
	// Every informer's full state: the existing objects and the new ones,
	// each at least ObjectBytes.
	fullState := float64(stormInformers * (stormExisting + stormObjects) * stormObjectBytes)
	// An informer whose resumed watch ends at once on the cut link
	// (client-go's "very short watch") relists without ever seeing the 410;
	// so every informer must relist once, and the 410 must have been seen.
	var expired int64
	for _, r := range report.Informers {
		expired += r.Counts.Expired
	}
	if sc.wantRelists && expired == 0 {
		t.Errorf("no informer saw a 410; want the compaction to expire their resourceVersion")
	}
	for _, r := range report.Informers {
		switch {
		case sc.wantRelists && r.Counts.Relists() != 1:
			t.Errorf("%s: %+v; want exactly one relist", r.Name, r.Counts)
		case !sc.wantRelists && (r.Counts.Relists() != 0 || r.Counts.Expired != 0):
			t.Errorf("%s: %+v; want no 410 and no relist", r.Name, r.Counts)
		}
	}
	if sc.wantRelists {
		if got := report.Server.Lists + report.Server.WatchLists; got != stormInformers {
			t.Errorf("server served %.0f full states (LIST %.0f, watch-list %.0f), want %d", got, report.Server.Lists, report.Server.WatchLists, stormInformers)
		}
		if sent := report.Server.ListBytes + report.Server.WatchBytes; sent < fullState {
			t.Errorf("server sent %.0f bytes to relisting informers, want at least %.0f (every object to every informer)", sent, fullState)
		}
		return
	}
	if report.Server.Lists+report.Server.WatchLists != 0 {
		t.Errorf("server served full states (LIST %.0f, watch-list %.0f) to informers that resumed", report.Server.Lists, report.Server.WatchLists)
	}
	if want := float64(stormInformers * stormObjects); report.Server.WatchEvents < want {
		t.Errorf("server sent %.0f watch events, want at least %.0f (each informer gets the %d writes it missed)", report.Server.WatchEvents, want, stormObjects)
	}
	if report.Server.WatchBytes >= fullState/2 {
		t.Errorf("resuming informers were sent %.0f bytes, want far less than the %.0f of a full relist", report.Server.WatchBytes, fullState)
	}
}

// waitCompactedTo polls etcd until it is compacted to rev or beyond.
func waitCompactedTo(ctx context.Context, s *framework.Stack, rev int64) error {
	for {
		compacted, err := embedetcd.CompactedRevision(ctx, s.Etcd)
		if err != nil {
			return err
		}
		if compacted >= rev {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("etcd not compacted to %d (at %d): %w", rev, compacted, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func logStorm(t *testing.T, r relist.StormReport) {
	t.Helper()
	t.Logf("%d informers cut off at resourceVersion %s for %s; %d objects written (last %s); %d relisted; slowest resync %s",
		len(r.Informers), r.CutAt, r.Disconnected.Round(time.Millisecond), r.Config.Objects, r.LastWrite, r.Relists(), r.MaxResync().Round(time.Millisecond))
	t.Logf("server: LIST %.0f (%.0f bytes), watch-list %.0f, watch events %.0f (%.0f bytes)",
		r.Server.Lists, r.Server.ListBytes, r.Server.WatchLists, r.Server.WatchEvents, r.Server.WatchBytes)
	for _, i := range r.Informers {
		t.Logf("  %s: resync %s, %+v", i.Name, i.Resync.Round(time.Millisecond), i.Counts)
	}
}
