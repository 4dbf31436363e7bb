package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/controlplane"
	"minicp/e2e/framework"
	"minicp/faults"
)

// histogram is a histogram's totals summed over the series that match.
type histogram struct {
	count uint64
	sum   float64
}

// readHistogram reads name's series whose labels include want from the
// stack's registry, which /metrics serves.
func readHistogram(t *testing.T, s *framework.Stack, name string, want map[string]string) histogram {
	t.Helper()
	families, err := s.ControlPlane.Metrics().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var h histogram
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if labels[k] != v {
					continue series
				}
			}
			h.count += m.GetHistogram().GetSampleCount()
			h.sum += m.GetHistogram().GetSampleSum()
		}
	}
	return h
}

// delta is how much a histogram grew between two readings.
func (h histogram) since(before histogram) histogram {
	return histogram{count: h.count - before.count, sum: h.sum - before.sum}
}

func startWithFaults(t *testing.T) *framework.Stack {
	return framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.Triage.EnableDebugFaults = true
	}})
}

// addFault adds a fault through the HTTP API, as minictl fault add does.
func addFault(t *testing.T, s *framework.Stack, f faults.Fault) {
	t.Helper()
	body, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.HTTP.Post(s.URL+"/debug/faults", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		raw, _ := io.ReadAll(resp.Body)
		t.Fatalf("adding fault %+v: %d %s", f, resp.StatusCode, raw)
	}
}

func createConfigMaps(t *testing.T, s *framework.Stack, prefix string, n int) {
	t.Helper()
	ctx := framework.Context(t, time.Minute)
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i)}}
		if _, err := s.Clientset.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating %s: %v", cm.Name, err)
		}
	}
}

var (
	configMapCreates = map[string]string{"verb": "POST", "resource": "configmaps"}
	etcdCreates      = map[string]string{"operation": "create", "type": "configmaps"}
	faultAdmission   = map[string]string{"name": faults.AdmissionPluginName}
)

// M15, the triage drill's "No" branch: the apiserver is slow,
// etcd is not. apiserver_request_duration_seconds grows by the injected
// admission delay; etcd_request_duration_seconds stays flat.
func TestSlowAdmissionMovesApiserverLatencyAndLeavesEtcdFlat(t *testing.T) {
	s := startWithFaults(t)
	addFault(t, s, faults.Fault{Point: faults.Admission, Resource: "configmaps", Delay: faults.Duration(300 * time.Millisecond)})
	apiBefore := readHistogram(t, s, "apiserver_request_duration_seconds", configMapCreates)
	etcdBefore := readHistogram(t, s, "etcd_request_duration_seconds", etcdCreates)
	admissionBefore := readHistogram(t, s, "apiserver_admission_controller_admission_duration_seconds", faultAdmission)

	createConfigMaps(t, s, "slow-admission", 3)

	api := readHistogram(t, s, "apiserver_request_duration_seconds", configMapCreates).since(apiBefore)
	etcd := readHistogram(t, s, "etcd_request_duration_seconds", etcdCreates).since(etcdBefore)
	admission := readHistogram(t, s, "apiserver_admission_controller_admission_duration_seconds", faultAdmission).since(admissionBefore)
	t.Logf("3 creates: apiserver %.3fs, admission %.3fs, etcd %.3fs in %d requests", api.sum, admission.sum, etcd.sum, etcd.count)
	if api.count != 3 || api.sum < 0.9 {
		t.Errorf("apiserver_request_duration_seconds{verb=POST,resource=configmaps}: +%d requests, +%.3fs; want 3 and at least 0.9s", api.count, api.sum)
	}
	if admission.sum < 0.9 {
		t.Errorf("apiserver_admission_controller_admission_duration_seconds{name=DebugFaults}: +%.3fs, want at least 0.9s", admission.sum)
	}
	if etcd.count != 3 || etcd.sum > 0.3 {
		t.Errorf("etcd_request_duration_seconds{operation=create,type=configmaps}: +%d requests, +%.3fs; want 3 and flat (under 0.3s)", etcd.count, etcd.sum)
	}
}

// The flowchart's "Yes" branch (M9): etcd is slow, and the apiserver's
// etcd_request_duration_seconds says so; admission stays flat.
func TestSlowEtcdMovesEtcdRequestDurationAndLeavesAdmissionFlat(t *testing.T) {
	s := startWithFaults(t)
	addFault(t, s, faults.Fault{Point: faults.EtcdTxn, Resource: "configmaps", Delay: faults.Duration(300 * time.Millisecond)})
	apiBefore := readHistogram(t, s, "apiserver_request_duration_seconds", configMapCreates)
	etcdBefore := readHistogram(t, s, "etcd_request_duration_seconds", etcdCreates)
	admissionBefore := readHistogram(t, s, "apiserver_admission_controller_admission_duration_seconds", faultAdmission)

	createConfigMaps(t, s, "slow-etcd", 3)

	api := readHistogram(t, s, "apiserver_request_duration_seconds", configMapCreates).since(apiBefore)
	etcd := readHistogram(t, s, "etcd_request_duration_seconds", etcdCreates).since(etcdBefore)
	admission := readHistogram(t, s, "apiserver_admission_controller_admission_duration_seconds", faultAdmission).since(admissionBefore)
	t.Logf("3 creates: apiserver %.3fs, admission %.3fs, etcd %.3fs in %d requests", api.sum, admission.sum, etcd.sum, etcd.count)
	if etcd.count != 3 || etcd.sum < 0.9 {
		t.Errorf("etcd_request_duration_seconds{operation=create,type=configmaps}: +%d requests, +%.3fs; want 3 and at least 0.9s", etcd.count, etcd.sum)
	}
	if api.sum < 0.9 {
		t.Errorf("apiserver_request_duration_seconds{verb=POST,resource=configmaps}: +%.3fs, want at least the 0.9s etcd took", api.sum)
	}
	if admission.count != 3 || admission.sum > 0.3 {
		t.Errorf("apiserver_admission_controller_admission_duration_seconds{name=DebugFaults}: +%d, +%.3fs; want 3 and flat", admission.count, admission.sum)
	}
}

// timedGet sends one request and returns its code, body and duration.
func timedGet(t *testing.T, client *http.Client, method, url string) (int, []byte, time.Duration) {
	t.Helper()
	req, err := http.NewRequestWithContext(framework.Context(t, time.Minute), method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body, time.Since(start)
}

// expectTimeoutStatus checks upstream's 504 for a request cut by its
// deadline. The message is the timeout filter's, or, when the handler
// noticed the deadline first, that of the step it was in (an etcd request,
// a wait for the cache): both are 504 Timeout, as upstream.
func expectTimeoutStatus(t *testing.T, code int, body []byte) {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatalf("not a Status: %s", body)
	}
	if code != http.StatusGatewayTimeout || st.Code != 504 || st.Reason != metav1.StatusReasonTimeout || !strings.HasPrefix(st.Message, "Timeout: ") {
		t.Errorf("got %d %+v, want 504 Timeout", code, st)
	}
}

// A request whose admission outlasts its timeout ends as 504 with
// upstream's Status, on time, and nothing is stored.
func TestAnAdmissionDelayPastTheTimeoutIsA504(t *testing.T) {
	s := startWithFaults(t)
	addFault(t, s, faults.Fault{Point: faults.Admission, Resource: "configmaps", Delay: faults.Duration(time.Minute)})
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"late"}}`
	req, err := http.NewRequest(http.MethodPost, s.ControlPlane.URL()+"/api/v1/namespaces/default/configmaps?timeout=1s", bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := s.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	expectTimeoutStatus(t, resp.StatusCode, raw)
	if took < time.Second || took > 3*time.Second {
		t.Errorf("the 504 came after %v, want about the 1s timeout", took)
	}
	if _, err := s.Clientset.CoreV1().ConfigMaps("default").Get(context.Background(), "late", metav1.GetOptions{}); err == nil {
		t.Error("the timed-out create was stored")
	}
}

// M9: "etcd healthy but the apiserver's LIST times out" — the
// watch cache is behind (its etcd watch is held back) and a consistent
// LIST waits for it. etcd's request durations stay flat; the cache's read
// wait grows.
func TestAListTimesOutWhileEtcdIsHealthyBecauseTheCacheIsWaiting(t *testing.T) {
	s := startWithFaults(t)
	addFault(t, s, faults.Fault{Point: faults.EtcdWatch, Resource: "configmaps", Delay: faults.Duration(time.Minute)})
	createConfigMaps(t, s, "behind", 1) // etcd has it; the cache will not for a minute

	etcdReads := map[string]string{"type": "configmaps"}
	etcdBefore := readHistogram(t, s, "etcd_request_duration_seconds", etcdReads)
	waitBefore := readHistogram(t, s, "apiserver_watch_cache_read_wait_seconds", map[string]string{"resource": "configmaps"})

	code, body, took := timedGet(t, s.HTTP, http.MethodGet, s.ControlPlane.URL()+"/api/v1/namespaces/default/configmaps?timeout=1s")
	expectTimeoutStatus(t, code, body)
	if took > 3*time.Second {
		t.Errorf("the 504 came after %v, want about the 1s timeout", took)
	}

	etcd := readHistogram(t, s, "etcd_request_duration_seconds", etcdReads).since(etcdBefore)
	var wait histogram
	framework.Eventually(t, framework.StateTimeout, "the cache's read wait to be recorded", func() bool {
		wait = readHistogram(t, s, "apiserver_watch_cache_read_wait_seconds", map[string]string{"resource": "configmaps"}).since(waitBefore)
		return wait.count > 0
	})
	t.Logf("LIST 504 after %v: etcd %.4fs in %d requests, cache read wait %.3fs", took, etcd.sum, etcd.count, wait.sum)
	// The LIST's etcd requests (its revision read) take milliseconds,
	// more on a loaded machine; a LIST that had waited in etcd would show
	// most of its 1 s timeout there.
	if etcd.sum > 0.5 {
		t.Errorf("etcd_request_duration_seconds{type=configmaps}: +%.3fs, want flat: etcd is healthy", etcd.sum)
	}
	if wait.sum < 0.9 {
		t.Errorf("apiserver_watch_cache_read_wait_seconds{resource=configmaps}: +%.3fs, want about the 1s the LIST waited", wait.sum)
	}
	// A read that need not be fresh is answered at once, from the stale cache.
	if code, body, _ := timedGet(t, s.HTTP, http.MethodGet, s.ControlPlane.URL()+"/api/v1/namespaces/default/configmaps?resourceVersion=0"); code != http.StatusOK || bytes.Contains(body, []byte("behind-0")) {
		t.Errorf("LIST resourceVersion=0: %d, want 200 without the config map the cache has not seen: %s", code, body)
	}
}
