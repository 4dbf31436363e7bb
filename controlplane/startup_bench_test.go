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
	for _, fsync := range []bool{false, true} {
		name := "unsafe-no-fsync"
		if fsync {
			name = "fsync"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				cfg := NewConfig()
				cfg.DataDir = b.TempDir()
				cfg.Etcd.ClientPort, cfg.Etcd.PeerPort, cfg.APIServer.Port = 0, 0, 0
				cfg.Etcd.UnsafeNoFsync = !fsync
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
