package controlplane

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"minicp/apiserver"
	"minicp/embedetcd"
	"minicp/kinds"
	"minicp/lease"
	"minicp/registry"
	"minicp/registry/rangealloc"
	"minicp/watchcache"
)

// Storage media types accepted by --storage-media-type.
const (
	MediaTypeProtobuf = "application/vnd.kubernetes.protobuf"
	MediaTypeJSON     = "application/json"
)

// Config is the whole control plane's configuration. NewConfig returns
// minicp's defaults; AddFlags binds every field to a command-line flag.
type Config struct {
	// Resources is the table the stack serves, handed to the registry,
	// the watch cache and the apiserver. Nil (NewConfig's): the built-in
	// kinds (package kinds), whose Services allocate from
	// ServiceClusterIPRange and ServiceNodePortRange; Start builds it.
	Resources *registry.Table
	// DataDir holds the embedded etcd's data and the kubeconfig.
	DataDir string
	// EtcdServers, when set, points minicp at an existing etcd cluster and
	// no embedded member is started (upstream --etcd-servers).
	EtcdServers []string
	// StorageMediaType is how objects are encoded in etcd (upstream
	// --storage-media-type): protobuf, as kube-apiserver does, or JSON.
	StorageMediaType string
	// EventTTL is the TTL of the etcd lease every Event key is bound to
	// (upstream --event-ttl).
	EventTTL time.Duration
	// EtcdCompactionInterval is how often the apiserver compacts etcd
	// (upstream --etcd-compaction-interval); 0 disables it.
	EtcdCompactionInterval time.Duration
	// EnableGarbageCollector runs the garbage collector and lets DELETE add
	// the finalizers of the orphan and foreground propagation policies
	// (kube-controller-manager's and kube-apiserver's
	// --enable-garbage-collector, default true).
	EnableGarbageCollector bool
	// GarbageCollectorResync is how often the garbage collector reads
	// discovery again, to watch resources served since (custom resources)
	// and stop watching those gone; 0 means 30 s, as upstream. Not a flag:
	// tests shorten it.
	GarbageCollectorResync time.Duration
	// Controllers chooses the control loops the controller manager runs,
	// as kube-controller-manager's --controllers does ("*", "name",
	// "-name"); empty means all (controllermanager.go).
	Controllers []string
	// ServiceClusterIPRange is the CIDR Services' ClusterIPs come from
	// (upstream --service-cluster-ip-range); its first address is the
	// kubernetes Service's.
	ServiceClusterIPRange string
	// ServiceNodePortRange is the ports NodePorts come from (upstream
	// --service-node-port-range).
	ServiceNodePortRange string

	Etcd       embedetcd.Config
	APIServer  apiserver.Config
	WatchCache watchcache.Config
	Nodes      NodesConfig
	Triage     TriageConfig

	// Logger receives minicp's own structured logs; nil means a quiet
	// logger at a level chosen by APIServer.Verbosity.
	Logger *slog.Logger
}

// NewConfig returns the defaults a learner gets from `go run ./cmd/minicp`.
func NewConfig() Config {
	return Config{
		DataDir:                "./minicp-data",
		StorageMediaType:       MediaTypeProtobuf,
		EventTTL:               time.Hour,
		EtcdCompactionInterval: registry.DefaultCompactionInterval,
		EnableGarbageCollector: true,
		ServiceClusterIPRange:  kinds.DefaultServiceClusterIPRange,
		ServiceNodePortRange:   kinds.DefaultServiceNodePortRange,
		Etcd:                   embedetcd.NewConfig(),
		APIServer:              apiserver.NewConfig(),
		WatchCache:             watchcache.NewConfig(),
		Nodes:                  NewNodesConfig(),
		Triage:                 NewTriageConfig(),
	}
}

// AddFlags registers the control plane's flags and those of its parts.
func (c *Config) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "directory for the embedded etcd's data and the kubeconfig minicp writes")
	fs.Func("etcd-servers", "comma-separated client URLs of an existing etcd cluster to use instead of an embedded member", func(s string) error {
		c.EtcdServers = splitList(s)
		return nil
	})
	fs.StringVar(&c.StorageMediaType, "storage-media-type", c.StorageMediaType, "encoding of objects stored in etcd: "+MediaTypeProtobuf+" or "+MediaTypeJSON)
	fs.BoolVar(&c.EnableGarbageCollector, "enable-garbage-collector", c.EnableGarbageCollector, "run the garbage collector: dependents whose owners are gone are deleted, and DELETE honours the Orphan and Foreground propagation policies")
	fs.DurationVar(&c.EventTTL, "event-ttl", c.EventTTL, "how long events are retained: each Event key is bound to an etcd lease of this TTL")
	fs.DurationVar(&c.EtcdCompactionInterval, "etcd-compaction-interval", c.EtcdCompactionInterval, "how often the apiserver compacts etcd's history (taking turns with other apiservers through compact_rev_key); 0 disables it")
	fs.StringVar(&c.ServiceClusterIPRange, "service-cluster-ip-range", c.ServiceClusterIPRange, "CIDR (IPv4 or IPv6) from which Services get their ClusterIPs; its first address is the kubernetes Service's")
	fs.StringVar(&c.ServiceNodePortRange, "service-node-port-range", c.ServiceNodePortRange, "ports from which NodePort and LoadBalancer Services get their NodePorts, <low>-<high>")
	fs.IntVar(&c.Etcd.Members, "etcd-members", c.Etcd.Members, "number of embedded etcd members, 1 or 3; with 3 and the default ports, clients use 2379-2381 and peers 12380-12382")
	addControllersFlag(fs, c)
	c.Etcd.AddFlags(fs)
	c.APIServer.AddFlags(fs)
	c.WatchCache.AddFlags(fs)
	c.Nodes.AddFlags(fs)
	c.Triage.AddFlags(fs)
}

// Validate checks the configuration and those of its parts.
func (c *Config) Validate() error {
	var errs []error
	if c.DataDir == "" {
		errs = append(errs, errors.New("--data-dir must not be empty"))
	}
	switch c.StorageMediaType {
	case MediaTypeProtobuf, MediaTypeJSON:
	default:
		errs = append(errs, fmt.Errorf("--storage-media-type %q is not supported: use %s or %s", c.StorageMediaType, MediaTypeProtobuf, MediaTypeJSON))
	}
	if c.EventTTL <= 0 {
		errs = append(errs, fmt.Errorf("--event-ttl must be positive, got %s", c.EventTTL))
	}
	if c.EtcdCompactionInterval < 0 {
		errs = append(errs, fmt.Errorf("--etcd-compaction-interval must not be negative (0 disables compaction), got %s", c.EtcdCompactionInterval))
	}
	if _, err := rangealloc.ParseIPRange(c.ServiceClusterIPRange); err != nil {
		errs = append(errs, fmt.Errorf("--service-cluster-ip-range: %w", err))
	}
	if c.Nodes.Simulated > 0 {
		if err := lease.CheckServiceRange(c.ServiceClusterIPRange); err != nil {
			errs = append(errs, fmt.Errorf("--service-cluster-ip-range with --simulated-nodes: %w", err))
		}
	}
	if _, err := rangealloc.ParsePortRange(c.ServiceNodePortRange); err != nil {
		errs = append(errs, fmt.Errorf("--service-node-port-range: %w", err))
	}
	if c.embedded() {
		etcd := c.embeddedEtcd()
		if err := etcd.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	api := c.APIServer
	if api.TLSCertFile == "" && api.TLSPrivateKeyFile == "" { // minicp makes them (pki.go)
		api.TLSCertFile, api.TLSPrivateKeyFile = "<data-dir>/pki/apiserver.crt", "<data-dir>/pki/apiserver.key"
	}
	if err := api.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.WatchCache.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Nodes.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Triage.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := validateControllers(c.Controllers); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.validateServed()...)
	return errors.Join(errs...)
}

// builtinKinds is the configuration of the built-in kinds: the Service
// ranges.
func (c *Config) builtinKinds() kinds.Config {
	return kinds.Config{ServiceClusterIPRange: c.ServiceClusterIPRange, ServiceNodePortRange: c.ServiceNodePortRange}
}

// validateServed checks the flags that name resources against the table:
// --etcd-servers-overrides and --watch-cache-sizes.
func (c *Config) validateServed() []error {
	table := c.Resources
	if table == nil {
		table = kinds.NewTable() // names only: the Service ranges do not matter here
	}
	var errs []error
	overrides, _ := parseOverrides(c.Triage.EtcdServersOverrides) // malformed entries: Triage.Validate
	for gr := range overrides {
		if _, ok := table.LookupGroupResource(gr); !ok {
			errs = append(errs, fmt.Errorf("--etcd-servers-overrides: minicp serves no resource %q", gr))
		}
	}
	for name := range c.WatchCache.Sizes {
		if _, err := table.Parse(name); err != nil {
			errs = append(errs, fmt.Errorf("--watch-cache-sizes: %w", err))
		}
	}
	return errs
}

// embeddedEtcd is the embedded etcd's configuration: the etcd flags, the
// data directory under --data-dir, and, for three members on etcd's
// default ports (2379 and 2380, which would overlap as 2379-2381 and
// 2380-2382), peers moved to 12380-12382.
func (c *Config) embeddedEtcd() embedetcd.Config {
	etcd := c.Etcd
	etcd.DataDir = c.etcdDataDir()
	defaults := embedetcd.NewConfig()
	if etcd.Members == 3 && etcd.ClientPort == defaults.ClientPort && etcd.PeerPort == defaults.PeerPort {
		etcd.PeerPort = 12380
	}
	return etcd
}

// embedded reports whether minicp starts its own etcd.
func (c *Config) embedded() bool { return len(c.EtcdServers) == 0 }

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
