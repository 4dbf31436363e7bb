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
	sizes, err := cfg.resolveSizes(testResources)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"pods": 100, "leases": 0, "configmaps": 7, "nodes": DefaultSize} {
		if got := sizes[mustLookup(name)]; got != want {
			t.Errorf("window of %s = %d, want %d", name, got, want)
		}
	}
	if got := FormatSizes(cfg.Sizes); got != "configmaps#7,leases#0,pods#100" {
		t.Errorf("FormatSizes = %q", got)
	}
	cfg.Enabled = false
	if sizes, _ := cfg.resolveSizes(testResources); sizes[mustLookup("pods")] != 0 {
		t.Error("--watch-cache=false must turn every window off")
	}
}

func TestBadWatchCacheSettingsAreRefusedWithAHint(t *testing.T) {
	for _, tc := range []struct {
		value, want string
	}{
		{"pods=5", "want resource#size"},
		{"pods#-1", "non-negative integer"},
	} {
		_, err := ParseSizes(tc.value)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseSizes(%q) = %v, want an error containing %q", tc.value, err, tc.want)
		}
	}
	unknown := NewConfig()
	unknown.Sizes["widgets"] = 5
	if _, err := unknown.resolveSizes(testResources); err == nil || !strings.Contains(err.Error(), `unknown resource "widgets": minicp serves namespaces`) {
		t.Errorf("a window for widgets: got %v, want an error naming what minicp serves", err)
	}
	cfg := NewConfig()
	cfg.BookmarkFrequency = 0
	cfg.WatcherBufferSize = 0
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "--watch-cache-bookmark-frequency must be positive") || !strings.Contains(err.Error(), "buffer") {
		t.Errorf("Validate = %v, want both problems reported", err)
	}
}
