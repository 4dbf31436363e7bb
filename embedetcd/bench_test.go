package embedetcd

import (
	"context"
	"testing"
)

// BenchmarkStartSingleMember measures Start until ready (leader elected,
// quorum read answered) for one member without fsync in a fresh directory.
// With etcd's ticks most of the time is the randomised first election:
// 1 to 10 heartbeats of 100 ms. Close is not timed.
func BenchmarkStartSingleMember(b *testing.B) {
	for _, bc := range []struct {
		name               string
		tickMs, electionMs uint
	}{
		{"etcd-default-100ms-heartbeat", 100, 1000},
		{"10ms-heartbeat", 10, 100},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				cfg := testConfig(b)
				cfg.TickMs, cfg.ElectionMs = bc.tickMs, bc.electionMs
				b.StartTimer()
				c, err := Start(context.Background(), cfg)
				b.StopTimer()
				if err != nil {
					b.Fatalf("Start: %v", err)
				}
				if err := c.Close(); err != nil {
					b.Fatalf("Close: %v", err)
				}
			}
		})
	}
}
