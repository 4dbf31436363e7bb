package e2e

import (
	"testing"

	"minicp/e2e/framework"
)

// Each running stack has a Prometheus registry of its own: two stacks in
// one test binary share no series, so what one stack's /metrics says is
// that stack's traffic only (M1, M15: the triage reads these figures).
func TestTwoStacksInOneProcessShareNoMetricSeries(t *testing.T) {
	first := framework.Start(t, framework.Options{})
	second := framework.Start(t, framework.Options{})
	firstBefore := readHistogram(t, first, "apiserver_request_duration_seconds", configMapCreates)
	firstEtcdBefore := readHistogram(t, first, "etcd_request_duration_seconds", etcdCreates)
	secondBefore := readHistogram(t, second, "apiserver_request_duration_seconds", configMapCreates)

	createConfigMaps(t, second, "only-in-second", 2)

	if got := readHistogram(t, second, "apiserver_request_duration_seconds", configMapCreates).since(secondBefore); got.count != 2 {
		t.Errorf("second stack: %d config map creates counted, want 2", got.count)
	}
	if got := readHistogram(t, first, "apiserver_request_duration_seconds", configMapCreates).since(firstBefore); got.count != 0 {
		t.Errorf("first stack: %d config map creates counted, want 0 (they went to the second stack)", got.count)
	}
	if got := readHistogram(t, first, "etcd_request_duration_seconds", etcdCreates).since(firstEtcdBefore); got.count != 0 {
		t.Errorf("first stack: %d etcd creates of config maps counted, want 0", got.count)
	}
}
