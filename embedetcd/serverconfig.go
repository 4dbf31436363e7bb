package embedetcd

import (
	"math"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/client/pkg/v3/types"
	"go.etcd.io/etcd/server/v3/config"
	"go.etcd.io/etcd/server/v3/etcdserver"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/crypto/bcrypt"
)

// Values embed.NewConfig gives the fields minicp does not expose.
const (
	maxSnapFiles         = 5              // embed.DefaultMaxSnapshots
	maxWALFiles          = 5              // embed.DefaultMaxWALs
	maxTxnOps            = 128            // embed.DefaultMaxTxnOps
	maxConcurrentStreams = math.MaxUint32 // embed.DefaultMaxConcurrentStreams
	warningApplyDuration = 100 * time.Millisecond
	downgradeCheckTime   = 5 * time.Second
	compactHashCheckTime = time.Minute
	authTokenTTLSeconds  = 300
)

// bootstrap says how a member starts.
type bootstrap struct {
	// initialCluster maps every member's name to its peer URL; nil when
	// the member restarts from its WAL, which already records the cluster.
	initialCluster types.URLsMap
	// token is the initial cluster token; it seeds the cluster and member
	// IDs and is only read when bootstrapping.
	token string
}

// serverConfig builds the etcd server configuration of member m: the knobs
// of c, etcd's defaults for everything else (what embed.StartEtcd would
// pass), and the bootstrap information when b carries an initial cluster.
func (c *Config) serverConfig(m *Member, b bootstrap) (config.ServerConfig, error) {
	retention, err := compactionRetention(c.AutoCompactionMode, c.AutoCompactionRetention)
	if err != nil {
		return config.ServerConfig{}, err
	}
	fg, err := c.serverFeatureGate(m.name)
	if err != nil {
		return config.ServerConfig{}, err
	}
	return config.ServerConfig{
		Name:       m.name,
		ClientURLs: types.URLs{m.clientURL},
		PeerURLs:   types.URLs{m.peerURL},
		DataDir:    m.dataDir,

		InitialPeerURLsMap:  b.initialCluster,
		InitialClusterToken: b.token,
		NewCluster:          b.initialCluster != nil,

		TickMs:                     c.TickMs,
		ElectionTicks:              int(c.ElectionMs / c.TickMs),
		InitialElectionTickAdvance: true,
		PreVote:                    true,
		StrictReconfigCheck:        true,

		SnapshotCount:          c.SnapshotCount,
		SnapshotCatchUpEntries: etcdserver.DefaultSnapshotCatchUpEntries,
		MaxSnapFiles:           maxSnapFiles,
		MaxWALFiles:            maxWALFiles,
		UnsafeNoFsync:          c.UnsafeNoFsync,
		BackendFreelistType:    bolt.FreelistMapType,
		QuotaBackendBytes:      c.QuotaBackendBytes,

		AutoCompactionMode:      c.AutoCompactionMode,
		AutoCompactionRetention: retention,

		LeaseCheckpointInterval:     c.LeaseCheckpointInterval,
		WatchProgressNotifyInterval: c.WatchProgressNotifyInterval,

		MaxTxnOps:            maxTxnOps,
		MaxRequestBytes:      c.MaxRequestBytes,
		MaxConcurrentStreams: maxConcurrentStreams,
		WarningApplyDuration: warningApplyDuration,
		DowngradeCheckTime:   downgradeCheckTime,
		CompactHashCheckTime: compactHashCheckTime,

		AuthToken:  "simple",
		BcryptCost: uint(bcrypt.DefaultCost),
		TokenTTL:   authTokenTTLSeconds,

		CORS:          map[string]struct{}{"*": {}},
		HostWhitelist: map[string]struct{}{"*": {}},

		V2Deprecation:     config.V2DeprDefault,
		ServerFeatureGate: fg,
		Logger:            c.Logger,
	}, nil
}

// quietLogger is the logger used when Config.Logger is nil: etcd's errors
// go to stderr, everything else is dropped.
func quietLogger() *zap.Logger {
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.Lock(os.Stderr), zapcore.ErrorLevel)
	return zap.New(dropStartupRace{core})
}

// startupRaceMessage is an error etcd v3.7 logs when its storage version
// monitor runs before the member's first backend commit has recorded a
// Raft term ("missing term information"), as happens on a fresh member
// with short heartbeats; the monitor tries again a few seconds later and
// succeeds. It is not an error a user can act on.
const startupRaceMessage = "failed to update storage version"

// dropStartupRace is a zap core that drops startupRaceMessage.
type dropStartupRace struct{ zapcore.Core }

func (d dropStartupRace) With(fields []zapcore.Field) zapcore.Core {
	return dropStartupRace{d.Core.With(fields)}
}

func (d dropStartupRace) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if e.Message == startupRaceMessage {
		return ce
	}
	return d.Core.Check(e, ce)
}
