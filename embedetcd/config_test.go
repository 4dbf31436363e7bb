package embedetcd

import (
	"flag"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/types"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/features"
)

func TestNewConfigAndServerConfigUseEtcdsDefaults(t *testing.T) {
	e := embed.NewConfig()
	c := NewConfig()
	c.DataDir = t.TempDir()
	m := &Member{name: "m", dataDir: c.DataDir}
	sc, err := c.serverConfig(m, bootstrap{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"snapshot count", sc.SnapshotCount, e.SnapshotCount},
		{"snapshot catch-up entries", sc.SnapshotCatchUpEntries, e.SnapshotCatchUpEntries},
		{"heartbeat ms", sc.TickMs, e.TickMs},
		{"election ticks", sc.ElectionTicks, e.ElectionTicks()},
		{"initial election tick advance", sc.InitialElectionTickAdvance, e.InitialElectionTickAdvance},
		{"max request bytes", sc.MaxRequestBytes, e.MaxRequestBytes},
		{"max snapshot files", sc.MaxSnapFiles, e.MaxSnapFiles},
		{"max WAL files", sc.MaxWALFiles, e.MaxWalFiles},
		{"max txn ops", sc.MaxTxnOps, e.MaxTxnOps},
		{"max concurrent streams", sc.MaxConcurrentStreams, e.MaxConcurrentStreams},
		{"warning apply duration", sc.WarningApplyDuration, e.WarningApplyDuration},
		{"downgrade check time", sc.DowngradeCheckTime, e.DowngradeCheckTime},
		{"compact hash check time", sc.CompactHashCheckTime, e.CompactHashCheckTime},
		{"pre-vote", sc.PreVote, e.PreVote},
		{"strict reconfig check", sc.StrictReconfigCheck, e.StrictReconfigCheck},
		{"auth token", sc.AuthToken, e.AuthToken},
		{"bcrypt cost", sc.BcryptCost, e.BcryptCost},
		{"auth token TTL", sc.TokenTTL, e.AuthTokenTTL},
		{"txn write with shared buffer", sc.ServerFeatureGate.Enabled(features.TxnModeWriteWithSharedBuffer), e.ServerFeatureGate.Enabled(features.TxnModeWriteWithSharedBuffer)},
		{"fast lease keep-alive", sc.ServerFeatureGate.Enabled(features.FastLeaseKeepAlive), e.ServerFeatureGate.Enabled(features.FastLeaseKeepAlive)},
		{"lease checkpoint persist", sc.ServerFeatureGate.Enabled(features.LeaseCheckpointPersist), e.ServerFeatureGate.Enabled(features.LeaseCheckpointPersist)},
		{"watch progress notify interval", c.WatchProgressNotifyInterval, 10 * time.Minute},
		{"v2 deprecation", sc.V2Deprecation, e.V2DeprecationEffective()},
		{"quota", sc.QuotaBackendBytes, e.QuotaBackendBytes},
		{"unsafe no fsync", sc.UnsafeNoFsync, e.UnsafeNoFsync},
		{"lease checkpoint", sc.ServerFeatureGate.Enabled(features.LeaseCheckpoint), e.ServerFeatureGate.Enabled(features.LeaseCheckpoint)},
		{"lease checkpoint interval", sc.LeaseCheckpointInterval, 5 * time.Minute},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want etcd's %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestValidateRejectsBadConfig(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"a missing data directory", func(c *Config) { c.DataDir = "" }, "data directory must be set"},
		{"two members", func(c *Config) { c.Members = 2 }, "Members must be 1 or 3, got 2"},
		{"zero members", func(c *Config) { c.Members = 0 }, "Members must be 1 or 3, got 0"},
		{"a name with a slash", func(c *Config) { c.Name = "a/b" }, `member name "a/b"`},
		{"an empty host", func(c *Config) { c.Host = "" }, "host must be set"},
		{"a negative port", func(c *Config) { c.ClientPort = -1 }, "--etcd-client-port -1 is out of range"},
		{"three members past the last port", func(c *Config) { c.Members, c.PeerPort = 3, 65534 }, "--etcd-peer-port 65534 is out of range"},
		{"client and peer on one port", func(c *Config) { c.PeerPort = c.ClientPort }, "overlap"},
		{"three members on etcd's adjacent default ports", func(c *Config) { c.Members = 3 }, "--etcd-client-port 2379 and --etcd-peer-port 2380 overlap"},
		{"an unknown compaction mode", func(c *Config) { c.AutoCompactionMode = "hourly" }, `--auto-compaction-mode must be "periodic" or "revision"`},
		{"a duration in revision mode", func(c *Config) { c.AutoCompactionMode, c.AutoCompactionRetention = "revision", "5m" }, "revision mode takes a number of revisions"},
		{"a retention that is no duration", func(c *Config) { c.AutoCompactionRetention = "soon" }, "periodic mode takes hours"},
		{"checkpoint persistence without checkpoints", func(c *Config) { c.LeaseCheckpointPersist = true }, "requires LeaseCheckpoint: add --feature-gates=LeaseCheckpoint=true or --experimental-enable-lease-checkpoint"},
		{"a zero checkpoint interval", func(c *Config) { c.LeaseCheckpointInterval = 0 }, "--lease-checkpoint-interval must be positive"},
		{"a progress notify interval under etcd's minimum", func(c *Config) { c.WatchProgressNotifyInterval = time.Millisecond }, "at least 100ms"},
		{"a zero heartbeat", func(c *Config) { c.TickMs = 0 }, "--heartbeat-interval must be > 0"},
		{"an election timeout under 5 heartbeats", func(c *Config) { c.TickMs, c.ElectionMs = 100, 400 }, "at least 5 times --heartbeat-interval"},
		{"an election timeout over 50 s", func(c *Config) { c.TickMs, c.ElectionMs = 1000, 60000 }, "at most 50000 ms"},
		{"a zero request size", func(c *Config) { c.MaxRequestBytes = 0 }, "MaxRequestBytes must be > 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewConfig()
			c.DataDir = "/tmp/x"
			tc.change(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestValidateAcceptsDefaultsAndLabSettings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Config)
	}{
		{"the defaults", func(*Config) {}},
		{"three members on free ports", func(c *Config) { c.Members, c.ClientPort, c.PeerPort = 3, 0, 0 }},
		{"three members on ports far apart", func(c *Config) { c.Members, c.ClientPort, c.PeerPort = 3, 2379, 12380 }},
		{"hourly periodic compaction", func(c *Config) { c.AutoCompactionRetention = "1" }},
		{"compaction every 5 minutes", func(c *Config) { c.AutoCompactionRetention = "5m" }},
		{"keeping 1000 revisions", func(c *Config) { c.AutoCompactionMode, c.AutoCompactionRetention = "revision", "1000" }},
		{"persisted 1 s checkpoints", func(c *Config) {
			c.EnableLeaseCheckpoint, c.LeaseCheckpointPersist, c.LeaseCheckpointInterval = true, true, time.Second
		}},
		{"no quota", func(c *Config) { c.QuotaBackendBytes = -1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewConfig()
			c.DataDir = "/tmp/x"
			tc.change(&c)
			if err := c.Validate(); err != nil {
				t.Fatalf("got %v, want no error", err)
			}
		})
	}
}

func TestAddFlagsBindsEtcdFlagNames(t *testing.T) {
	c := NewConfig()
	fs := flag.NewFlagSet("minicp", flag.ContinueOnError)
	c.AddFlags(fs)
	if err := fs.Parse([]string{
		"--auto-compaction-mode=revision", "--auto-compaction-retention=1000",
		"--quota-backend-bytes=1048576",
		"--experimental-enable-lease-checkpoint", "--experimental-enable-lease-checkpoint-persist",
		"--lease-checkpoint-interval=1s",
		"--watch-progress-notify-interval=30s",
		"--snapshot-count=500", "--heartbeat-interval=50", "--election-timeout=500",
		"--unsafe-no-fsync", "--etcd-client-port=0", "--etcd-peer-port=0",
	}); err != nil {
		t.Fatal(err)
	}
	want := NewConfig()
	want.AutoCompactionMode, want.AutoCompactionRetention = "revision", "1000"
	want.QuotaBackendBytes = 1 << 20
	want.EnableLeaseCheckpoint, want.LeaseCheckpointPersist = true, true
	want.LeaseCheckpointInterval = time.Second
	want.WatchProgressNotifyInterval = 30 * time.Second
	want.SnapshotCount, want.TickMs, want.ElectionMs = 500, 50, 500
	want.UnsafeNoFsync = true
	want.ClientPort, want.PeerPort = 0, 0
	if c != want {
		t.Errorf("after parsing: got %+v, want %+v", c, want)
	}
	if f := fs.Lookup("etcd-client-port"); f == nil || f.DefValue != "2379" {
		t.Errorf("--etcd-client-port default: got %v, want 2379", f)
	}
	if f := fs.Lookup("etcd-peer-port"); f == nil || f.DefValue != "2380" {
		t.Errorf("--etcd-peer-port default: got %v, want 2380", f)
	}
	if f := fs.Lookup("lease-checkpoint-interval"); f == nil || !strings.Contains(f.Usage, "etcd has no such flag") ||
		!strings.Contains(f.Usage, "remaining TTL exceeds the interval") {
		t.Errorf("--lease-checkpoint-interval help: got %v, want it to say etcd has no such flag and which leases are checkpointed", f)
	}
}

func TestBothSpellingsOfLeaseCheckpointingSetTheSameGates(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string // the server's feature gates, as etcd prints them
	}{
		{"etcd v3.5's flags", []string{"--experimental-enable-lease-checkpoint", "--experimental-enable-lease-checkpoint-persist"},
			"LeaseCheckpoint=true,LeaseCheckpointPersist=true"},
		{"etcd v3.7's feature gates", []string{"--feature-gates=LeaseCheckpoint=true,LeaseCheckpointPersist=true"},
			"LeaseCheckpoint=true,LeaseCheckpointPersist=true"},
		{"the last spelling wins", []string{"--experimental-enable-lease-checkpoint", "--feature-gates=LeaseCheckpoint=false"},
			"LeaseCheckpoint=false,LeaseCheckpointPersist=false"},
		{"other gates pass through", []string{"--feature-gates=FastLeaseKeepAlive=false", "--experimental-enable-lease-checkpoint"},
			"FastLeaseKeepAlive=false,LeaseCheckpoint=true,LeaseCheckpointPersist=false"},
		{"neither", nil, "LeaseCheckpoint=false,LeaseCheckpointPersist=false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewConfig()
			c.DataDir = t.TempDir()
			fs := flag.NewFlagSet("minicp", flag.ContinueOnError)
			c.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			sc, err := c.serverConfig(&Member{name: "m", dataDir: c.DataDir}, bootstrap{})
			if err != nil {
				t.Fatal(err)
			}
			if got := sc.ServerFeatureGate.String(); got != tc.want {
				t.Errorf("feature gates: got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBothSpellingsOfTheProgressNotifyIntervalSetIt(t *testing.T) {
	for _, name := range []string{"watch-progress-notify-interval", "experimental-watch-progress-notify-interval"} {
		c := NewConfig()
		fs := flag.NewFlagSet("minicp", flag.ContinueOnError)
		c.AddFlags(fs)
		if err := fs.Parse([]string{"--" + name + "=2s"}); err != nil {
			t.Fatal(err)
		}
		if c.WatchProgressNotifyInterval != 2*time.Second {
			t.Errorf("--%s=2s: got %s, want 2s", name, c.WatchProgressNotifyInterval)
		}
	}
}

func TestFeatureGatesRejectsUnknownGatesAndBadValues(t *testing.T) {
	for _, arg := range []string{"--feature-gates=LeaseCheckpoints=true", "--feature-gates=LeaseCheckpoint", "--feature-gates=LeaseCheckpoint=yes"} {
		c := NewConfig()
		fs := flag.NewFlagSet("minicp", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		c.AddFlags(fs)
		if err := fs.Parse([]string{arg}); err == nil {
			t.Errorf("%s: got no error, want one", arg)
		}
	}
	c := NewConfig()
	c.DataDir = "/tmp/x"
	c.FeatureGates = "LeaseCheckpoint=true"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "through its own field") {
		t.Errorf("LeaseCheckpoint in FeatureGates: got %v, want an error naming its own field", err)
	}
}

func TestServerConfigBootstrapsOnlyWithoutAWAL(t *testing.T) {
	c := NewConfig()
	c.DataDir = "/tmp/x"
	c.LeaseCheckpointInterval = 1500 * time.Millisecond
	c.ElectionMs = 1500
	m := &Member{name: "m", dataDir: "/tmp/x/m",
		clientURL: url.URL{Scheme: "http", Host: "127.0.0.1:1"}, peerURL: url.URL{Scheme: "http", Host: "127.0.0.1:2"}}

	initial := types.URLsMap{"m": types.URLs{m.peerURL}}
	boot, err := c.serverConfig(m, bootstrap{initialCluster: initial, token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	if !boot.NewCluster || boot.InitialPeerURLsMap.String() != initial.String() || boot.InitialClusterToken != "tok" {
		t.Errorf("bootstrap: got new=%v cluster=%q token=%q, want new=true cluster=%q token=tok",
			boot.NewCluster, boot.InitialPeerURLsMap, boot.InitialClusterToken, initial)
	}
	restart, err := c.serverConfig(m, bootstrap{})
	if err != nil {
		t.Fatal(err)
	}
	if restart.NewCluster || restart.InitialPeerURLsMap != nil || restart.InitialClusterToken != "" {
		t.Errorf("restart: got new=%v cluster=%q token=%q, want none of them", restart.NewCluster, restart.InitialPeerURLsMap, restart.InitialClusterToken)
	}
	if restart.LeaseCheckpointInterval != 1500*time.Millisecond {
		t.Errorf("lease checkpoint interval: got %s, want 1.5s", restart.LeaseCheckpointInterval)
	}
	if restart.ElectionTicks != 15 {
		t.Errorf("election ticks: got %d, want 1500 ms / 100 ms = 15", restart.ElectionTicks)
	}
	if got := restart.ClientURLs.String(); got != "http://127.0.0.1:1" {
		t.Errorf("client URLs: got %q, want http://127.0.0.1:1", got)
	}
}

func TestCompactionRetentionReadsHoursDurationsAndRevisions(t *testing.T) {
	for _, tc := range []struct {
		mode, retention string
		want            time.Duration
	}{
		{"periodic", "", 0},
		{"periodic", "0", 0},
		{"periodic", "2", 2 * time.Hour},
		{"periodic", "30m", 30 * time.Minute},
		{"revision", "1000", 1000},
	} {
		got, err := compactionRetention(tc.mode, tc.retention)
		if err != nil || got != tc.want {
			t.Errorf("%s %q: got %v, %v; want %v", tc.mode, tc.retention, got, err, tc.want)
		}
	}
}

func TestMemberNamesAndPorts(t *testing.T) {
	c := NewConfig()
	if got := c.memberNames(); len(got) != 1 || got[0] != "minicp-etcd" {
		t.Errorf("one member: got %v, want [minicp-etcd]", got)
	}
	c.Members = 3
	if got := strings.Join(c.memberNames(), " "); got != "minicp-etcd-0 minicp-etcd-1 minicp-etcd-2" {
		t.Errorf("three members: got %q", got)
	}
	if got := memberPort(2379, 2); got != 2381 {
		t.Errorf("member 2 of 2379: got %d, want 2381", got)
	}
	if got := memberPort(0, 2); got != 0 {
		t.Errorf("member 2 of a free port: got %d, want 0", got)
	}
}
