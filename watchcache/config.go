package watchcache

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"minicp/registry"
)

// Defaults. Upstream sizes its windows dynamically (100 to 100k events, aiming
// at 75 s of history); minicp keeps a fixed window per resource, so that a
// learner can predict when a resourceVersion falls out of it.
const (
	// DefaultSize is the window of every resource without its own size.
	DefaultSize = 1000
	// DefaultBookmarkFrequency is how often a watch with
	// allowWatchBookmarks gets a BOOKMARK (upstream: about a minute).
	DefaultBookmarkFrequency = time.Minute
	// DefaultTooLargeResourceVersionWait is how long a read that asks for a
	// resourceVersion the cache has not reached waits (upstream: 3 s).
	DefaultTooLargeResourceVersionWait = 3 * time.Second
	// DefaultWatcherBufferSize is how many events may wait for one slow
	// watcher before it is ended: 10 s of a resource changing 100 times a
	// second. (Upstream sizes buffers between 10 and 1000 events and, when
	// one is full, blocks the dispatcher for up to about 100 ms before
	// ending the watcher; minicp never blocks it, so it keeps a larger
	// buffer instead.) The events are shared, so a buffer costs 8 bytes
	// per slot.
	DefaultWatcherBufferSize = 1000
)

// Config configures the watch cache. NewConfig returns the defaults;
// AddFlags binds the fields to upstream-style flags.
type Config struct {
	// Enabled is --watch-cache: false sends every request to etcd.
	Enabled bool
	// DefaultSize is the window (events kept) of resources that neither
	// Sizes nor their descriptor (Resource.WatchCacheSize) give one.
	DefaultSize int
	// Sizes are per-resource windows, keyed by resource as upstream's
	// flag names them ("pods", "leases.coordination.k8s.io", or "leases"
	// when one group has it); New resolves them against the table and
	// refuses unknown names. Size 0 turns the cache off for that resource
	// (--watch-cache-sizes=pods#0).
	Sizes map[string]int
	// ConsistentListFromCache serves LIST resourceVersion="" from the
	// cache after waiting for it to reach etcd's current revision; false
	// sends such lists to etcd.
	ConsistentListFromCache bool
	// BookmarkFrequency is how often watches with allowWatchBookmarks get
	// a BOOKMARK.
	BookmarkFrequency time.Duration
	// TooLargeResourceVersionWait bounds every wait for the cache to reach
	// a resourceVersion (reads at N; consistent reads, which then fall back
	// to etcd).
	TooLargeResourceVersionWait time.Duration
	// WatcherBufferSize is the bounded buffer of each client watch.
	WatcherBufferSize int
	// Clock drives bookmarks, waits and re-list backoff; nil is the real
	// clock. Tests inject a fake one.
	Clock clock.WithTicker
	// Metrics is the registry of the cache's stack, where its metrics are
	// registered (metrics.go); nil registers them nowhere.
	Metrics prometheus.Registerer
	// Logger receives one line per re-initialisation; nil discards.
	Logger *slog.Logger
}

// NewConfig returns the defaults: cache on, consistent lists from cache,
// each resource's own window (Resource.WatchCacheSize: 5000 for pods and
// leases), DefaultSize for the others.
func NewConfig() Config {
	return Config{
		Enabled:                     true,
		DefaultSize:                 DefaultSize,
		Sizes:                       map[string]int{},
		ConsistentListFromCache:     true,
		BookmarkFrequency:           DefaultBookmarkFrequency,
		TooLargeResourceVersionWait: DefaultTooLargeResourceVersionWait,
		WatcherBufferSize:           DefaultWatcherBufferSize,
	}
}

// AddFlags registers the watch cache's flags, with c's values as defaults.
func (c *Config) AddFlags(fs *flag.FlagSet) {
	fs.BoolVar(&c.Enabled, "watch-cache", c.Enabled, "serve LIST, GET and WATCH from a per-resource cache fed by one etcd watch per resource; false sends every request to etcd")
	fs.IntVar(&c.DefaultSize, "default-watch-cache-size", c.DefaultSize, "events each resource's watch window keeps, unless --watch-cache-sizes says otherwise")
	fs.Func("watch-cache-sizes", "per-resource watch windows as resource[.group]#size, comma-separated (e.g. pods#5000,leases#1000); size 0 turns the cache off for that resource; a resource not named keeps its own window (5000 for pods and leases), else --default-watch-cache-size", func(s string) error {
		sizes, err := ParseSizes(s)
		if err != nil {
			return err
		}
		if c.Sizes == nil {
			c.Sizes = map[string]int{}
		}
		for r, n := range sizes {
			c.Sizes[r] = n
		}
		return nil
	})
	fs.BoolVar(&c.ConsistentListFromCache, "consistent-list-from-cache", c.ConsistentListFromCache, "serve LIST with resourceVersion=\"\" from the watch cache once it has caught up with etcd's current revision; false reads etcd")
	fs.DurationVar(&c.BookmarkFrequency, "watch-cache-bookmark-frequency", c.BookmarkFrequency, "how often watches with allowWatchBookmarks get a BOOKMARK event")
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var errs []error
	if c.DefaultSize < 0 {
		errs = append(errs, fmt.Errorf("--default-watch-cache-size must not be negative, got %d", c.DefaultSize))
	}
	for r, n := range c.Sizes {
		if n < 0 {
			errs = append(errs, fmt.Errorf("--watch-cache-sizes: size of %s must not be negative, got %d", r, n))
		}
	}
	if c.BookmarkFrequency <= 0 {
		errs = append(errs, fmt.Errorf("--watch-cache-bookmark-frequency must be positive, got %s", c.BookmarkFrequency))
	}
	if c.TooLargeResourceVersionWait <= 0 {
		errs = append(errs, fmt.Errorf("the watch cache's resourceVersion wait must be positive, got %s", c.TooLargeResourceVersionWait))
	}
	if c.WatcherBufferSize <= 0 {
		errs = append(errs, fmt.Errorf("the watch cache's watcher buffer must hold at least one event, got %d", c.WatcherBufferSize))
	}
	return errors.Join(errs...)
}

// resolveSizes returns each resource's window under cfg: 0 when the cache
// is off for it. It refuses names in Sizes that the table does not serve.
func (c *Config) resolveSizes(table *registry.Table) (map[*registry.Resource]int, error) {
	named := map[*registry.Resource]int{}
	var errs []error
	for name, n := range c.Sizes {
		res, err := table.Parse(name)
		if err != nil {
			errs = append(errs, fmt.Errorf("--watch-cache-sizes: %w", err))
			continue
		}
		named[res] = n
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sizes := map[*registry.Resource]int{}
	for _, res := range table.All() {
		n, ok := named[res]
		switch {
		case !c.Enabled, res.NotCached:
			n = 0
		case ok:
		case res.WatchCacheSize > 0:
			n = res.WatchCacheSize
		default:
			n = c.DefaultSize
		}
		sizes[res] = n
	}
	return sizes, nil
}

// sizeFor is the window of a resource added to the table after the
// cache started (a custom resource): a --watch-cache-sizes entry naming
// it ("widgets.example.com" or "widgets"), its own default, or the
// default size; 0 with the cache disabled.
func (c *Config) sizeFor(res *registry.Resource) int {
	if !c.Enabled || res.NotCached {
		return 0
	}
	for name, n := range c.Sizes {
		if schema.ParseGroupResource(name) == res.GroupResource() || name == res.Name {
			return n
		}
	}
	if res.WatchCacheSize > 0 {
		return res.WatchCacheSize
	}
	return c.DefaultSize
}

// ParseSizes parses upstream's --watch-cache-sizes format,
// "resource[.group]#size,...". A resource of a named group may be given
// without it ("leases#1000"); names are resolved (and unknown ones
// refused) when the cache is built, against its table.
func ParseSizes(s string) (map[string]int, error) {
	sizes := map[string]int{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, num, ok := strings.Cut(item, "#")
		if !ok {
			return nil, fmt.Errorf("invalid value of watch cache size %q: want resource#size, e.g. pods#5000", item)
		}
		n, err := strconv.Atoi(num)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("invalid size of watch cache in %q: want a non-negative integer", item)
		}
		sizes[strings.TrimSpace(name)] = n
	}
	return sizes, nil
}

// FormatSizes is the inverse of ParseSizes, sorted by resource.
func FormatSizes(sizes map[string]int) string {
	var items []string
	for r, n := range sizes {
		items = append(items, fmt.Sprintf("%s#%d", r, n))
	}
	sort.Strings(items)
	return strings.Join(items, ",")
}

// groupResource names res as upstream's flags and metrics do: "pods",
// "leases.coordination.k8s.io".
func groupResource(res *registry.Resource) string {
	return res.GroupVersionResource().GroupResource().String()
}
