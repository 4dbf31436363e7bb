package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/apiserver/admission"
	"minicp/apiserver/filters"
	"minicp/internal/testsupport"
)

// slowPlugin holds requests on config maps back for delay, or until their
// deadline.
type slowPlugin struct{ delay time.Duration }

func (p slowPlugin) Name() string { return "Slow" }

func (p slowPlugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if a.Resource.Name != "configmaps" {
		return nil
	}
	select {
	case <-time.After(p.delay):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// phaseIn extracts one phase's duration from a log line or header.
func phaseIn(t *testing.T, text, phase string) time.Duration {
	t.Helper()
	m := regexp.MustCompile(`\b` + phase + `=([0-9.]+[a-zµ]+)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no %s= in %q", phase, text)
	}
	d, err := time.ParseDuration(m[1])
	if err != nil {
		t.Fatalf("%s=%s: %v", phase, m[1], err)
	}
	return d
}

// M15: where did the time of a slow request go?
func TestASlowRequestLogsOneLineWithItsPhases(t *testing.T) {
	ts := startAdmissionServer(t,
		func(c *Config) { c.SlowRequestThreshold = 50 * time.Millisecond },
		func(s *Server) { s.AddAdmissionPlugin(slowPlugin{delay: 80 * time.Millisecond}) })
	resp := ts.do(t, "POST", "/api/v1/namespaces/default/configmaps", fmt.Sprintf(configMapBody, "slow"), "Content-Type: application/json")
	if resp.code != http.StatusCreated {
		t.Fatalf("create: %d %s", resp.code, resp.body)
	}
	var line string
	for _, l := range strings.Split(ts.logs.String(), "\n") {
		if strings.Contains(l, `msg="slow request"`) && strings.Contains(l, "/configmaps") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no slow-request line in the log:\n%s", ts.logs.String())
	}
	if admission := phaseIn(t, line, "admission"); admission < 80*time.Millisecond {
		t.Errorf("admission=%v, want at least the plugin's 80ms: %s", admission, line)
	}
	// Phases are charged one at a time, so they add up to at most the
	// total, give or take their rounding: the plugin's 80 ms charged to
	// etcd as well would break that however loaded the machine is.
	var sum time.Duration
	for _, phase := range []string{"authentication", "admission", "storage", "cache_wait", "etcd", "encoding"} {
		sum += phaseIn(t, line, phase)
	}
	if total := phaseIn(t, line, "total"); sum > total+10*time.Millisecond {
		t.Errorf("the phases add up to %v, more than the total %v: %s", sum, total, line)
	}
	for _, want := range []string{"verb=POST", "code=201", "etcd_requests=", "authentication=", "encoding=", "cache_wait="} {
		if !strings.Contains(line, want) {
			t.Errorf("slow-request line lacks %q: %s", want, line)
		}
	}
	// A GET is logged only if it too took the threshold, which a loaded
	// machine can make it do: every line must show a total that did.
	if fast := ts.do(t, "GET", "/api/v1/namespaces/default/configmaps/slow", ""); fast.code != http.StatusOK {
		t.Fatalf("get: %d %s", fast.code, fast.body)
	}
	for _, l := range strings.Split(ts.logs.String(), "\n") {
		if strings.Contains(l, `msg="slow request"`) && phaseIn(t, l, "total") < 50*time.Millisecond {
			t.Errorf("a request faster than the 50ms threshold was logged as slow: %s", l)
		}
	}
}

func TestThePhasesHeaderCountsEtcdRequests(t *testing.T) {
	ts := startAdmissionServer(t, func(c *Config) { c.PhasesHeader = true }, nil)
	resp := ts.do(t, "GET", "/api/v1/namespaces/default", "")
	header := resp.header.Get(PhasesHeader)
	if resp.code != http.StatusOK || !strings.HasPrefix(header, "total=") {
		t.Fatalf("got %d %s: %q, want 200 and the phases", resp.code, PhasesHeader, header)
	}
	// A quorum GET is one etcd range request.
	if !strings.Contains(header, "(1)") || phaseIn(t, header, "etcd") <= 0 {
		t.Errorf("%s: %q, want etcd with one request", PhasesHeader, header)
	}
	quiet := startAdmissionServer(t, nil, nil)
	if h := quiet.do(t, "GET", "/api/v1/namespaces/default", "").header.Get(PhasesHeader); h != "" {
		t.Errorf("%s sent without --phases-header: %q", PhasesHeader, h)
	}
}

// A request cut by its deadline is answered 504 with upstream's Status,
// and its log line says which phase it was still in.
func TestARequestPastItsDeadlineIs504AndLogsWhereItWasStuck(t *testing.T) {
	ts := startAdmissionServer(t,
		func(c *Config) { c.SlowRequestThreshold = 100 * time.Millisecond },
		func(s *Server) { s.AddAdmissionPlugin(slowPlugin{delay: time.Hour}) })
	start := time.Now()
	resp := ts.do(t, "POST", "/api/v1/namespaces/default/configmaps?timeout=300ms", fmt.Sprintf(configMapBody, "late"), "Content-Type: application/json")
	took := time.Since(start)
	st := resp.status(t)
	if resp.code != http.StatusGatewayTimeout || st.Reason != metav1.StatusReasonTimeout || st.Message != "Timeout: "+filters.TimeoutMessage {
		t.Fatalf("got %d %s %q, want 504 Timeout \"Timeout: %s\"", resp.code, st.Reason, st.Message, filters.TimeoutMessage)
	}
	if took > 5*time.Second {
		t.Errorf("the 504 took %v for a 300ms timeout", took)
	}
	var line string
	testsupport.Eventually(t, 5*time.Second, "the slow-request line", func() bool {
		for _, l := range strings.Split(ts.logs.String(), "\n") {
			if strings.Contains(l, `msg="slow request"`) && strings.Contains(l, "/configmaps") {
				line = l
			}
		}
		return line != ""
	})
	// The handler may still be in admission when the line is written
	// (still_in=admission), or may just have left it: either way, the
	// time went to admission.
	if !strings.Contains(line, "code=504") || phaseIn(t, line, "admission") < 250*time.Millisecond {
		t.Errorf("slow-request line: %s, want code=504 and about 300ms in admission", line)
	}
}
