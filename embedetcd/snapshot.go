package embedetcd

// This file saves and restores snapshots (M16). A snapshot
// is one member's bbolt database streamed over the Maintenance API, with a
// sha256 of its contents appended. Restoring it builds a fresh data
// directory for a new one-member cluster holding the same keys at the same
// revisions, which is the trap: the restored etcd's revision is the
// snapshot's, lower than what clients saw before. Every write after the
// restore reuses a revision some client already holds, and a watch that
// resumes from it silently skips those writes. etcdutl's --bump-revision
// moves the revision past anything clients can hold, and --mark-compacted
// compacts everything below it, so that every resumed watch fails with
// "compacted" (410 through the apiserver) and clients relist.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	clientv3 "go.etcd.io/etcd/client/v3"
	clientsnapshot "go.etcd.io/etcd/client/v3/snapshot"
	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
)

// snapshotPeerURL is the peer URL recorded in a restored member. A
// one-member cluster never dials it, and Start does not compare it with the
// port it listens on.
const snapshotPeerURL = "http://127.0.0.1:2380"

// SnapshotInfo describes a snapshot file.
type SnapshotInfo struct {
	Path string
	// Revision is the etcd revision the snapshot was taken at.
	Revision int64
	// Keys counts the entries of the database, every bucket included.
	Keys int
	// Size is the database size in bytes.
	Size int64
}

// SaveSnapshot streams a snapshot of the member at endpoint (one client URL)
// into path, replacing any file there once the whole snapshot has arrived.
func SaveSnapshot(ctx context.Context, endpoint, path string, lg *zap.Logger) (SnapshotInfo, error) {
	if lg == nil {
		lg = quietLogger()
	}
	if _, err := clientsnapshot.SaveWithVersion(ctx, lg, clientv3.Config{Endpoints: []string{endpoint}}, path); err != nil {
		return SnapshotInfo{}, fmt.Errorf("saving a snapshot of %s to %s: %w", endpoint, path, err)
	}
	return ReadSnapshotInfo(path, lg)
}

// ReadSnapshotInfo checks a snapshot file and returns what is in it.
func ReadSnapshotInfo(path string, lg *zap.Logger) (SnapshotInfo, error) {
	if err := verifySnapshot(path); err != nil {
		return SnapshotInfo{}, err
	}
	if lg == nil {
		lg = quietLogger()
	}
	st, err := snapshot.NewV3(lg).Status(path)
	if err != nil {
		return SnapshotInfo{}, fmt.Errorf("snapshot %s: reading its database: %w", path, err)
	}
	return SnapshotInfo{Path: path, Revision: st.Revision, Keys: st.TotalKey, Size: st.TotalSize}, nil
}

// RestoreConfig says what to restore where.
type RestoreConfig struct {
	// SnapshotPath is a file written by SaveSnapshot or `etcdctl snapshot save`.
	SnapshotPath string
	// DataDir is the cluster directory Start will be given (Config.DataDir).
	// It must not exist or be empty.
	DataDir string
	// Name is the member name, Config.Name of the one-member cluster that
	// will start on DataDir (default minicp-etcd).
	Name string
	// BumpRevision raises the revision by this much after the restore
	// (etcdutl --bump-revision); it must come with MarkCompacted.
	BumpRevision uint64
	// MarkCompacted marks the bumped revision as compacted
	// (etcdutl --mark-compacted); it must come with BumpRevision.
	MarkCompacted bool
	// Logger receives etcdutl's logs; nil means errors only.
	Logger *zap.Logger
}

// RestoreResult says what a restore produced.
type RestoreResult struct {
	// MemberDir is the restored member's directory, DataDir/Name.
	MemberDir string
	// SnapshotRevision is the revision the snapshot was taken at.
	SnapshotRevision int64
	// Revision is the revision the restored etcd starts at:
	// SnapshotRevision + BumpRevision.
	Revision int64
	// CompactedRevision is the revision everything below is compacted to
	// (Revision with MarkCompacted, else none: 0).
	CompactedRevision int64
}

// RestoreSnapshot builds the data directory of a one-member cluster from a
// snapshot, with etcdutl v3.7's restore. It checks everything it can before
// writing: the flags go together, the file is a complete snapshot (its
// sha256 matches), and DataDir is empty. The member is restored into a
// temporary directory beside its final place and moved there only once
// complete, so a failed restore leaves DataDir as it was.
func RestoreSnapshot(cfg RestoreConfig) (RestoreResult, error) {
	if cfg.Name == "" {
		cfg.Name = defaultName
	}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger()
	}
	if err := cfg.validate(); err != nil {
		return RestoreResult{}, err
	}
	info, err := ReadSnapshotInfo(cfg.SnapshotPath, cfg.Logger)
	if err != nil {
		return RestoreResult{}, err
	}
	created, err := ensureEmptyDir(cfg.DataDir)
	if err != nil {
		return RestoreResult{}, err
	}
	memberDir := filepath.Join(cfg.DataDir, cfg.Name)
	if err := restoreInto(cfg, memberDir); err != nil {
		if created != "" {
			err = errors.Join(err, os.RemoveAll(created))
		}
		return RestoreResult{}, err
	}
	res := RestoreResult{MemberDir: memberDir, SnapshotRevision: info.Revision, Revision: info.Revision}
	if cfg.MarkCompacted {
		res.Revision += int64(cfg.BumpRevision)
		res.CompactedRevision = res.Revision
	}
	return res, nil
}

func (cfg *RestoreConfig) validate() error {
	var errs []error
	if cfg.SnapshotPath == "" {
		errs = append(errs, errors.New("a snapshot file is required"))
	}
	if cfg.DataDir == "" {
		errs = append(errs, errors.New("a data directory to restore into is required"))
	}
	if !memberNameRE.MatchString(cfg.Name) {
		errs = append(errs, fmt.Errorf("etcd member name %q must start with a letter or digit and contain only letters, digits, '.', '_' or '-'", cfg.Name))
	}
	if (cfg.BumpRevision > 0) != cfg.MarkCompacted {
		errs = append(errs, errors.New("--bump-revision and --mark-compacted go together (as in etcdutl): "+
			"a bump without marking the new revision compacted leaves resumed watches silently on their stale state, and there is nothing to mark without a bump"))
	}
	return errors.Join(errs...)
}

// restoreInto runs etcdutl's restore in a temporary directory inside
// DataDir and renames the result to memberDir. The temporary directory is
// removed whatever happens.
func restoreInto(cfg RestoreConfig, memberDir string) (err error) {
	tmp, err := os.MkdirTemp(cfg.DataDir, ".restore-")
	if err != nil {
		return fmt.Errorf("creating a temporary directory in %s: %w", cfg.DataDir, err)
	}
	defer func() {
		if rerr := os.RemoveAll(tmp); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}()
	staged := filepath.Join(tmp, cfg.Name)
	err = snapshot.NewV3(cfg.Logger).Restore(snapshot.RestoreConfig{
		SnapshotPath:        cfg.SnapshotPath,
		Name:                cfg.Name,
		OutputDataDir:       staged,
		PeerURLs:            []string{snapshotPeerURL},
		InitialCluster:      cfg.Name + "=" + snapshotPeerURL,
		InitialClusterToken: cfg.Name, // Start uses Config.Name as the token
		RevisionBump:        cfg.BumpRevision,
		MarkCompacted:       cfg.MarkCompacted,
	})
	if err != nil {
		return fmt.Errorf("restoring %s: %w", cfg.SnapshotPath, err)
	}
	if err := os.Rename(staged, memberDir); err != nil {
		return fmt.Errorf("moving the restored member into %s: %w", memberDir, err)
	}
	return nil
}

// ensureEmptyDir creates dir if it is missing and refuses it if it holds
// anything. created is the outermost directory this call made (dir or one
// of its parents), "" if dir existed: removing it undoes the call.
func ensureEmptyDir(dir string) (created string, err error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		created = filepath.Clean(dir)
		for parent := filepath.Dir(created); parent != created; parent = filepath.Dir(created) {
			if _, err := os.Stat(parent); err == nil {
				break
			}
			created = parent
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", fmt.Errorf("creating %s: %w", dir, err)
		}
		return created, nil
	case err != nil:
		return "", fmt.Errorf("data directory %s cannot be read: %w", dir, err)
	case len(entries) > 0:
		return "", fmt.Errorf("data directory %s is not empty (it holds %s): restore into a new directory, or remove this one first; nothing was changed",
			dir, entries[0].Name())
	}
	return "", nil
}

// verifySnapshot checks that path is a complete snapshot: a file whose last
// 32 bytes are the sha256 of everything before them, after a database whose
// size is a multiple of 512 bytes, as etcd writes them.
func verifySnapshot(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("snapshot file %s does not exist", path)
	}
	if err != nil {
		return fmt.Errorf("snapshot file %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("snapshot file %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("snapshot %s is not a regular file", path)
	}
	size := st.Size()
	if size < sha256.Size || size%512 != sha256.Size {
		return fmt.Errorf("%s is not an etcd snapshot: a snapshot ends with a sha256 checksum after a database of whole 512-byte sectors, and this file has %d bytes", path, size)
	}
	h := sha256.New()
	if _, err := io.CopyN(h, f, size-sha256.Size); err != nil {
		return fmt.Errorf("snapshot file %s: %w", path, err)
	}
	want := make([]byte, sha256.Size)
	if _, err := io.ReadFull(f, want); err != nil {
		return fmt.Errorf("snapshot file %s: %w", path, err)
	}
	if !bytes.Equal(h.Sum(nil), want) {
		return fmt.Errorf("snapshot %s is corrupt: its contents do not match the sha256 checksum at its end (truncated, or modified after it was saved)", path)
	}
	return nil
}
