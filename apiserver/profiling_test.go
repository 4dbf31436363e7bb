package apiserver

import (
	"net/http"
	"strings"
	"testing"
)

// TestProfilesAreServedUnlessProfilingIsOff checks upstream's --profiling:
// on by default, the pprof index and a named profile answer; off, the paths
// are not found.
func TestProfilesAreServedUnlessProfilingIsOff(t *testing.T) {
	ts := startTestServer(t, newFakeStore())
	index := ts.do(t, http.MethodGet, "/debug/pprof/", "")
	if index.code != http.StatusOK || !strings.Contains(string(index.body), "goroutine") {
		t.Fatalf("GET /debug/pprof/ = %d %s", index.code, index.body)
	}
	if heap := ts.do(t, http.MethodGet, "/debug/pprof/heap?debug=1", ""); heap.code != http.StatusOK || !strings.Contains(string(heap.body), "heap profile") {
		t.Fatalf("GET /debug/pprof/heap = %d %.200s", heap.code, heap.body)
	}
	if cmdline := ts.do(t, http.MethodGet, "/debug/pprof/cmdline", ""); cmdline.code != http.StatusOK {
		t.Fatalf("GET /debug/pprof/cmdline = %d", cmdline.code)
	}

	off := startTestServer(t, newFakeStore(), func(c *Config) { c.Profiling = false })
	if r := off.do(t, http.MethodGet, "/debug/pprof/", ""); r.code != http.StatusNotFound {
		t.Fatalf("with profiling off, GET /debug/pprof/ = %d, want 404", r.code)
	}
}
