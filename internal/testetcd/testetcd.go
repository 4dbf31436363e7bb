// Package testetcd starts the etcd minicp's tests run against: one
// in-process member per test, on free ports and a temporary directory.
package testetcd

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"

	"minicp/embedetcd"
)

// Start starts a one-member etcd for a test: a temporary data
// directory, free ports, no fsync, fast elections, no logs. configure may
// change the configuration before start. The cluster is closed when the
// test ends.
func Start(t testing.TB, configure ...func(*embedetcd.Config)) *embedetcd.Cluster {
	t.Helper()
	cfg := embedetcd.NewConfig()
	cfg.DataDir = t.TempDir()
	cfg.ClientPort, cfg.PeerPort = 0, 0
	cfg.UnsafeNoFsync = true
	cfg.TickMs, cfg.ElectionMs = 10, 100
	cfg.Logger = zap.NewNop()
	for _, f := range configure {
		f(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cluster, err := embedetcd.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("starting etcd: %v", err)
	}
	t.Cleanup(func() {
		if err := cluster.Close(); err != nil {
			t.Errorf("closing etcd: %v", err)
		}
	})
	return cluster
}
