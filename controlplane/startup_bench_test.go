package controlplane

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"
)

// BenchmarkStartToReady measures what a user waits for: from Start to a
// ready apiserver with default namespaces and a kubeconfig on disk, on a
// fresh data directory. Close is outside the timed region.
func BenchmarkStartToReady(b *testing.B) {
	cases := []struct {
		name               string
		fsync              bool
		tickMs, electionMs uint
	}{
		// What `go run ./cmd/minicp` does: fsync on, etcd's default 100 ms
		// heartbeat and 1 s election timeout.
		{"defaults", true, 100, 1000},
		{"unsafe-no-fsync", false, 100, 1000},
		// What e2e/framework does: no fsync and a 10 ms heartbeat, so etcd's
		// randomised first election takes tens of milliseconds.
		{"e2e-framework", false, 10, 100},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				cfg := NewConfig()
				cfg.DataDir = b.TempDir()
				cfg.Etcd.ClientPort, cfg.Etcd.PeerPort, cfg.APIServer.Port = 0, 0, 0
				cfg.Etcd.UnsafeNoFsync = !tc.fsync
				cfg.Etcd.TickMs, cfg.Etcd.ElectionMs = tc.tickMs, tc.electionMs
				cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				b.StartTimer()
				cp, err := Start(ctx, cfg)
				b.StopTimer()
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				if err := cp.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
