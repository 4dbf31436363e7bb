package controlplane

import (
	"minicp/embedetcd"
)

// RestoreSnapshot restores an etcd snapshot for `minicp --data-dir
// dataDir`: the member lands where Start looks for it (dataDir/etcd/<the
// default member name>), and minicp then restarts from it as from its own
// data. bumpRevision and markCompacted are etcdutl's --bump-revision and
// --mark-compacted and go together. dataDir/etcd must not exist or be
// empty; a refused or failed restore changes nothing.
func RestoreSnapshot(dataDir, snapshotPath string, bumpRevision uint64, markCompacted bool) (embedetcd.RestoreResult, error) {
	cfg := NewConfig()
	cfg.DataDir = dataDir
	return embedetcd.RestoreSnapshot(embedetcd.RestoreConfig{
		SnapshotPath:  snapshotPath,
		DataDir:       cfg.etcdDataDir(),
		Name:          cfg.Etcd.Name,
		BumpRevision:  bumpRevision,
		MarkCompacted: markCompacted,
	})
}
