package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// BenchmarkFirstCreateAfterStart measures what the first write of a
// fresh minicp process costs beside the next ones: each iteration starts a
// minicp process and times its first three ConfigMap creates, one after
// the other. Work a process does once, on its first write (building a
// converter, compiling a schema), shows as the first figure against the
// third.
//
//	go test -run XXX -bench BenchmarkFirstCreateAfterStart -benchtime 5x ./e2e/
func BenchmarkFirstCreateAfterStart(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin := buildMinicp(b)
	var first, third []time.Duration
	for b.Loop() {
		p := startMinicpProcess(b, ctx, bin)
		client := p.client(nil)
		var took [3]time.Duration
		for i := range took {
			start := time.Now()
			if code, body := send(ctx, client, http.MethodPost, p.url+configMapsKind.path, configMapsKind.body(fmt.Sprintf("first-%d", i), i)); code != http.StatusCreated {
				b.Fatalf("create %d: %d %s", i, code, body)
			}
			took[i] = time.Since(start)
		}
		p.stop(b)
		first, third = append(first, took[0]), append(third, took[2])
		b.Logf("first three creates: %v", took)
	}
	b.ReportMetric(ms(median(first)), "first-ms")
	b.ReportMetric(ms(median(third)), "third-ms")
}
