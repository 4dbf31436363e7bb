package embedetcd

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"time"

	"go.uber.org/zap"
)

// Compaction modes of --auto-compaction-mode, as etcd names them.
const (
	CompactionModePeriodic = "periodic"
	CompactionModeRevision = "revision"
)

// etcd v3.7 defaults this package reproduces. embed.NewConfig fills in the
// same values; config_test.go checks that they still agree.
const (
	defaultName                    = "minicp-etcd"
	defaultHost                    = "127.0.0.1"
	defaultClientPort              = 2379
	defaultPeerPort                = 2380
	defaultLeaseCheckpointInterval = 5 * time.Minute  // lease.defaultLeaseCheckpointInterval
	defaultWatchProgressNotify     = 10 * time.Minute // v3rpc progressReportInterval
	defaultSnapshotCount           = 10000            // etcdserver.DefaultSnapshotCount (100000 in v3.5)
	defaultTickMs                  = 100
	defaultElectionMs              = 1000
	defaultMaxRequestBytes         = 1.5 * 1024 * 1024 // embed.DefaultMaxRequestBytes

	// maxElectionMs is etcd's upper bound for --election-timeout.
	maxElectionMs = 50000
	// minWatchProgressNotify is the shortest interval etcd accepts; it
	// silently raises shorter ones.
	minWatchProgressNotify = 100 * time.Millisecond
)

// Config is one cluster's settings. NewConfig returns defaults; Validate
// checks them. Field comments name the etcd flag each one mirrors.
type Config struct {
	// DataDir is the cluster's directory; member m keeps its data in
	// DataDir/<m's name>. Required.
	DataDir string
	// Name is the member name prefix: one member is called Name, three
	// members Name-0, Name-1, Name-2. Name is also the initial cluster token.
	Name string
	// Members is the number of etcd members: 1 or 3.
	Members int
	// Host is the address every listener binds and every URL names.
	Host string
	// ClientPort is the first member's client port (0 = a free port).
	// Member i listens on ClientPort+i when ClientPort != 0.
	ClientPort int
	// PeerPort is the first member's peer port, with the same rule.
	PeerPort int
	// UnsafeNoFsync skips fsync (--unsafe-no-fsync): fast, loses data on a crash.
	UnsafeNoFsync bool
	// AutoCompactionMode is "periodic" or "revision" (--auto-compaction-mode).
	AutoCompactionMode string
	// AutoCompactionRetention turns on etcd's own compaction
	// (--auto-compaction-retention): hours or a duration in periodic mode,
	// a number of revisions in revision mode. "" or "0" = off, the default,
	// because the apiserver compacts etcd itself.
	AutoCompactionRetention string
	// QuotaBackendBytes is the database size that raises the NOSPACE alarm
	// (--quota-backend-bytes). 0 = etcd's 2 GiB; negative = no quota.
	QuotaBackendBytes int64
	// EnableLeaseCheckpoint makes the leader record each lease's remaining
	// TTL in the Raft log, so a new leader does not reset it: etcd's
	// feature gate LeaseCheckpoint (--feature-gates=LeaseCheckpoint=true,
	// or etcd v3.5's --experimental-enable-lease-checkpoint).
	EnableLeaseCheckpoint bool
	// LeaseCheckpointPersist also stores the remaining TTL in the backend,
	// so it survives a restart: the feature gate LeaseCheckpointPersist
	// (or --experimental-enable-lease-checkpoint-persist). A cluster whose
	// version is 3.6 or later persists checkpoints whether it is set or not.
	LeaseCheckpointPersist bool
	// FeatureGates holds etcd's other server feature gates, "Gate=bool,..."
	// sorted by name, e.g. "FastLeaseKeepAlive=false" (--feature-gates).
	// The gates with a field of their own (LeaseCheckpoint,
	// LeaseCheckpointPersist) are not kept here. "" = etcd's defaults.
	FeatureGates string
	// LeaseCheckpointInterval is how often the leader checkpoints a lease.
	// Only leases whose remaining TTL exceeds it are ever checkpointed.
	// etcd has no flag for it and always uses 5 minutes.
	LeaseCheckpointInterval time.Duration
	// WatchProgressNotifyInterval is how often idle watches get a progress
	// notification (--watch-progress-notify-interval; etcd v3.5 spelled
	// it --experimental-watch-progress-notify-interval). etcd
	// keeps this in a process-wide variable: the last cluster started in a
	// process sets it for all.
	WatchProgressNotifyInterval time.Duration
	// SnapshotCount is the number of applied entries between Raft snapshots
	// (--snapshot-count). 0 = etcd's default.
	SnapshotCount uint64
	// TickMs is the Raft heartbeat interval in milliseconds (--heartbeat-interval).
	TickMs uint
	// ElectionMs is the Raft election timeout in milliseconds (--election-timeout).
	ElectionMs uint
	// MaxRequestBytes is the largest client request etcd accepts (--max-request-bytes).
	MaxRequestBytes uint
	// Logger receives etcd's own logs; nil = errors only, on stderr.
	Logger *zap.Logger
}

// NewConfig returns etcd's defaults for every knob, minicp's name and
// ports 2379/2380 on 127.0.0.1, one member and no DataDir.
func NewConfig() Config {
	return Config{
		Name:                        defaultName,
		Members:                     1,
		Host:                        defaultHost,
		ClientPort:                  defaultClientPort,
		PeerPort:                    defaultPeerPort,
		AutoCompactionMode:          CompactionModePeriodic,
		LeaseCheckpointInterval:     defaultLeaseCheckpointInterval,
		WatchProgressNotifyInterval: defaultWatchProgressNotify,
		SnapshotCount:               defaultSnapshotCount,
		TickMs:                      defaultTickMs,
		ElectionMs:                  defaultElectionMs,
		MaxRequestBytes:             defaultMaxRequestBytes,
	}
}

// AddFlags binds the fields users tune to flags named as etcd v3.7 names
// them, the v3.5 names of those etcd has renamed since (they set the same
// fields), and minicp's --lease-checkpoint-interval and port flags.
// DataDir, Name, Members and Host are left to the caller.
func (c *Config) AddFlags(fs *flag.FlagSet) {
	fs.IntVar(&c.ClientPort, "etcd-client-port", c.ClientPort, "client port of the embedded etcd (0 = a free port); with several members, member i uses port+i")
	fs.IntVar(&c.PeerPort, "etcd-peer-port", c.PeerPort, "peer (Raft) port of the embedded etcd (0 = a free port); with several members, member i uses port+i")
	fs.StringVar(&c.AutoCompactionMode, "auto-compaction-mode", c.AutoCompactionMode, "how --auto-compaction-retention is read: 'periodic' (hours or a duration such as 5m) or 'revision' (a number of revisions)")
	fs.StringVar(&c.AutoCompactionRetention, "auto-compaction-retention", c.AutoCompactionRetention, "etcd's own compaction retention; empty or 0 turns it off (the apiserver compacts etcd itself)")
	fs.Int64Var(&c.QuotaBackendBytes, "quota-backend-bytes", c.QuotaBackendBytes, "database size in bytes that raises etcd's NOSPACE alarm and makes it read-only; 0 = etcd's 2 GiB")
	c.addFeatureGateFlags(fs)
	fs.DurationVar(&c.LeaseCheckpointInterval, "lease-checkpoint-interval", c.LeaseCheckpointInterval, "how often the leader checkpoints lease TTLs; etcd has no such flag and always uses 5m. Only leases whose remaining TTL exceeds the interval are ever checkpointed")
	fs.DurationVar(&c.WatchProgressNotifyInterval, "watch-progress-notify-interval", c.WatchProgressNotifyInterval, "how often etcd sends progress notifications to idle watches")
	fs.DurationVar(&c.WatchProgressNotifyInterval, "experimental-watch-progress-notify-interval", c.WatchProgressNotifyInterval, "etcd v3.5's spelling of --watch-progress-notify-interval")
	fs.Uint64Var(&c.SnapshotCount, "snapshot-count", c.SnapshotCount, "number of committed transactions between Raft snapshots to disk (etcd v3.7's default; v3.5's was 100000)")
	fs.UintVar(&c.TickMs, "heartbeat-interval", c.TickMs, "Raft heartbeat interval in milliseconds")
	fs.UintVar(&c.ElectionMs, "election-timeout", c.ElectionMs, "Raft election timeout in milliseconds")
	fs.BoolVar(&c.UnsafeNoFsync, "unsafe-no-fsync", c.UnsafeNoFsync, "skip fsync: faster, but a crash loses data")
}

// memberNameRE keeps member names usable as directory names.
var memberNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Validate reports every problem in c at once, with the flag to change
// where there is one.
func (c *Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if c.DataDir == "" {
		add("etcd data directory must be set")
	}
	if !memberNameRE.MatchString(c.Name) {
		add("etcd member name %q must start with a letter or digit and contain only letters, digits, '.', '_' or '-'", c.Name)
	}
	if c.Members != 1 && c.Members != 3 {
		add("etcd Members must be 1 or 3, got %d", c.Members)
	}
	if c.Host == "" {
		add("etcd host must be set, e.g. 127.0.0.1")
	}
	errs = append(errs, c.validatePorts()...)
	if _, err := compactionRetention(c.AutoCompactionMode, c.AutoCompactionRetention); err != nil {
		errs = append(errs, err)
	}
	if c.LeaseCheckpointPersist && !c.EnableLeaseCheckpoint {
		add("the feature gate LeaseCheckpointPersist (--experimental-enable-lease-checkpoint-persist) requires LeaseCheckpoint: add --feature-gates=LeaseCheckpoint=true or --experimental-enable-lease-checkpoint")
	}
	if err := c.validateFeatureGates(); err != nil {
		errs = append(errs, err)
	}
	if c.LeaseCheckpointInterval <= 0 {
		add("--lease-checkpoint-interval must be positive, got %s", c.LeaseCheckpointInterval)
	}
	if c.WatchProgressNotifyInterval < minWatchProgressNotify {
		add("--watch-progress-notify-interval must be at least %s, got %s", minWatchProgressNotify, c.WatchProgressNotifyInterval)
	}
	if c.TickMs == 0 {
		add("--heartbeat-interval must be > 0 ms")
	}
	if c.ElectionMs == 0 {
		add("--election-timeout must be > 0 ms")
	}
	if c.TickMs > 0 && c.ElectionMs > 0 && 5*c.TickMs > c.ElectionMs {
		add("--election-timeout (%d ms) must be at least 5 times --heartbeat-interval (%d ms)", c.ElectionMs, c.TickMs)
	}
	if c.ElectionMs > maxElectionMs {
		add("--election-timeout (%d ms) must be at most %d ms", c.ElectionMs, maxElectionMs)
	}
	if c.MaxRequestBytes == 0 {
		add("MaxRequestBytes must be > 0")
	}
	return errors.Join(errs...)
}

// validatePorts checks both port ranges: each in 0..65535 for every member,
// and no port shared between the client and peer listeners.
func (c *Config) validatePorts() []error {
	var errs []error
	n := max(c.Members, 1)
	for _, p := range []struct {
		flag string
		port int
	}{{"--etcd-client-port", c.ClientPort}, {"--etcd-peer-port", c.PeerPort}} {
		if p.port < 0 || p.port+n-1 > math.MaxUint16 {
			errs = append(errs, fmt.Errorf("%s %d is out of range: members need ports %d..%d within 0..65535", p.flag, p.port, p.port, p.port+n-1))
		}
	}
	if c.ClientPort != 0 && c.PeerPort != 0 && abs(c.ClientPort-c.PeerPort) < n {
		errs = append(errs, fmt.Errorf("--etcd-client-port %d and --etcd-peer-port %d overlap: %d members use ports %d..%d and %d..%d; pick ports at least %d apart or 0 for free ports",
			c.ClientPort, c.PeerPort, n, c.ClientPort, c.ClientPort+n-1, c.PeerPort, c.PeerPort+n-1, n))
	}
	return errs
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// memberNames returns the members' names in order: Name alone, or Name-0..Name-(n-1).
func (c *Config) memberNames() []string {
	if c.Members == 1 {
		return []string{c.Name}
	}
	names := make([]string, c.Members)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", c.Name, i)
	}
	return names
}

// memberPort returns member i's port given the first member's: 0 stays 0
// (a free port), anything else is shifted by i.
func memberPort(base, i int) int {
	if base == 0 {
		return 0
	}
	return base + i
}

// compactionRetention reads --auto-compaction-retention as etcd does: a
// bare integer is hours in periodic mode and revisions in revision mode;
// periodic mode also takes a Go duration ("30m"). "" means "0": off.
func compactionRetention(mode, retention string) (time.Duration, error) {
	if mode != CompactionModePeriodic && mode != CompactionModeRevision {
		return 0, fmt.Errorf("--auto-compaction-mode must be %q or %q, got %q", CompactionModePeriodic, CompactionModeRevision, mode)
	}
	if retention == "" {
		return 0, nil
	}
	if n, err := strconv.ParseInt(retention, 10, 64); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("--auto-compaction-retention must not be negative, got %q", retention)
		}
		if mode == CompactionModeRevision {
			return time.Duration(n), nil
		}
		return time.Duration(n) * time.Hour, nil
	}
	if mode == CompactionModeRevision {
		return 0, fmt.Errorf("--auto-compaction-retention %q: revision mode takes a number of revisions", retention)
	}
	d, err := time.ParseDuration(retention)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("--auto-compaction-retention %q: periodic mode takes hours (\"1\") or a duration (\"30m\")", retention)
	}
	return d, nil
}
