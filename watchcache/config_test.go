package watchcache

import (
	"flag"
	"strings"
	"testing"
)

func TestWatchCacheSizesFlagTakesUpstreamsFormat(t *testing.T) {
	cfg := NewConfig()
	fs := flag.NewFlagSet("minicp", flag.ContinueOnError)
	cfg.AddFlags(fs)
	if err := fs.Parse([]string{"--watch-cache-sizes=pods#100,leases#0,configmaps#7", "--watch-cache=true"}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"pods": 100, "leases": 0, "configmaps": 7, "nodes": DefaultSize} {
		res, err := lookupResource(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.sizeOf(res); got != want {
			t.Errorf("window of %s = %d, want %d", name, got, want)
		}
	}
	if got := FormatSizes(cfg.Sizes); got != "configmaps#7,leases.coordination.k8s.io#0,pods#100" {
		t.Errorf("FormatSizes = %q", got)
	}
	cfg.Enabled = false
	if res, _ := lookupResource("pods"); cfg.sizeOf(res) != 0 {
		t.Error("--watch-cache=false must turn every window off")
	}
}

func TestBadWatchCacheSettingsAreRefusedWithAHint(t *testing.T) {
	for _, tc := range []struct {
		value, want string
	}{
		{"pods=5", "want resource#size"},
		{"pods#-1", "non-negative integer"},
		{"widgets#5", `unknown resource "widgets": minicp serves namespaces`},
	} {
		_, err := ParseSizes(tc.value)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseSizes(%q) = %v, want an error containing %q", tc.value, err, tc.want)
		}
	}
	cfg := NewConfig()
	cfg.BookmarkFrequency = 0
	cfg.WatcherBufferSize = 0
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "--watch-cache-bookmark-frequency must be positive") || !strings.Contains(err.Error(), "buffer") {
		t.Errorf("Validate = %v, want both problems reported", err)
	}
}
