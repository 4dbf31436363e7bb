package embedetcd

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// saveTestSnapshot writes keys into a fresh member, saves a snapshot and
// returns its path and the revision it was taken at.
func saveTestSnapshot(t *testing.T) (string, int64) {
	t.Helper()
	c := startCluster(t, testConfig(t))
	rev := putN(t, c.Client(), "/registry/configmaps/default/cm-", 5, 100)
	path := filepath.Join(t.TempDir(), "snap.db")
	info, err := SaveSnapshot(testContext(t), c.Endpoints()[0], path, nil)
	if err != nil {
		t.Fatalf("SaveSnapshot: %v", err)
	}
	if info.Revision != rev {
		t.Fatalf("snapshot revision %d, want %d", info.Revision, rev)
	}
	return path, rev
}

// M16: a restored etcd starts at the snapshot's revision,
// or, with --bump-revision and --mark-compacted, past it with all history
// below the new revision compacted.
func TestRestoredMemberStartsAtTheSnapshotRevisionOrPastItWhenBumped(t *testing.T) {
	path, snapRev := saveTestSnapshot(t)
	for _, tc := range []struct {
		name          string
		bump          uint64
		wantRev       int64
		wantCompacted int64
	}{
		{"without a bump the revision goes back to the snapshot's", 0, snapRev, 0},
		{"with a bump of 1000 the revision jumps and everything below is compacted", 1000, snapRev + 1000, snapRev + 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t)
			res, err := RestoreSnapshot(RestoreConfig{SnapshotPath: path, DataDir: cfg.DataDir, BumpRevision: tc.bump, MarkCompacted: tc.bump > 0})
			if err != nil {
				t.Fatalf("RestoreSnapshot: %v", err)
			}
			if res.SnapshotRevision != snapRev || res.Revision != tc.wantRev || res.CompactedRevision != tc.wantCompacted {
				t.Errorf("got %+v, want snapshot revision %d, revision %d, compacted %d", res, snapRev, tc.wantRev, tc.wantCompacted)
			}
			c := startCluster(t, cfg)
			ctx := testContext(t)
			current, compacted, err := revisions(ctx, c.Client())
			if err != nil || current != tc.wantRev || compacted != tc.wantCompacted {
				t.Fatalf("restored etcd at revision %d compacted %d (err %v), want %d and %d", current, compacted, err, tc.wantRev, tc.wantCompacted)
			}
			resp, err := c.Client().Get(ctx, "/registry/configmaps/default/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
			if err != nil || len(resp.Kvs) != 5 {
				t.Fatalf("restored keys: %d (err %v), want the 5 of the snapshot", len(resp.Kvs), err)
			}
			// A watch resuming from the snapshot's revision: without a bump
			// it waits for future writes (the trap); with one it is told
			// that history is gone.
			put, err := c.Client().Put(ctx, "/registry/configmaps/default/after", "x")
			if err != nil {
				t.Fatalf("put after restore: %v", err)
			}
			if put.Header.Revision != tc.wantRev+1 {
				t.Errorf("first write after restore at revision %d, want %d", put.Header.Revision, tc.wantRev+1)
			}
			wresp := <-c.Client().Watch(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithRev(snapRev))
			switch {
			case tc.bump == 0 && (wresp.Err() != nil || len(wresp.Events) == 0):
				t.Errorf("watch from %d after a plain restore: err %v, %d events; want the events from there on", snapRev, wresp.Err(), len(wresp.Events))
			case tc.bump > 0 && !errors.Is(wresp.Err(), rpctypes.ErrCompacted):
				t.Errorf("watch from %d after a bumped restore: got %v, want %v", snapRev, wresp.Err(), rpctypes.ErrCompacted)
			}
		})
	}
}

func TestRestoreRefusesBadInputAndChangesNothing(t *testing.T) {
	good, _ := saveTestSnapshot(t)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	flipped := slices.Clone(data)
	flipped[len(flipped)/2] ^= 0xff
	corrupt := write("corrupt.db", flipped)
	truncated := write("truncated.db", data[:len(data)-4096])
	cutMidSector := write("cut.db", data[:len(data)-100])
	notSnapshot := write("notes.txt", []byte("not a snapshot\n"))

	nonEmpty := t.TempDir()
	if err := os.WriteFile(filepath.Join(nonEmpty, "keep-me"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	fresh := func() string { return filepath.Join(t.TempDir(), "new", "etcd") }

	for _, tc := range []struct {
		name string
		cfg  RestoreConfig
		want string
	}{
		{"a missing file", RestoreConfig{SnapshotPath: filepath.Join(dir, "nope.db"), DataDir: fresh()}, "does not exist"},
		{"a file with a flipped byte", RestoreConfig{SnapshotPath: corrupt, DataDir: fresh()}, "is corrupt"},
		{"a file missing its last pages", RestoreConfig{SnapshotPath: truncated, DataDir: fresh()}, "is corrupt"},
		{"a file cut in the middle of a sector", RestoreConfig{SnapshotPath: cutMidSector, DataDir: fresh()}, "is not an etcd snapshot"},
		{"a file that is no snapshot", RestoreConfig{SnapshotPath: notSnapshot, DataDir: fresh()}, "is not an etcd snapshot"},
		{"a directory that is not empty", RestoreConfig{SnapshotPath: good, DataDir: nonEmpty}, "is not empty (it holds keep-me)"},
		{"a bump without mark-compacted", RestoreConfig{SnapshotPath: good, DataDir: fresh(), BumpRevision: 10}, "go together"},
		{"mark-compacted without a bump", RestoreConfig{SnapshotPath: good, DataDir: fresh(), MarkCompacted: true}, "go together"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := listTree(t, tc.cfg.DataDir)
			_, err := RestoreSnapshot(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error saying %q", err, tc.want)
			}
			if after := listTree(t, tc.cfg.DataDir); !slices.Equal(before, after) {
				t.Errorf("%s changed: %v before, %v after", tc.cfg.DataDir, before, after)
			}
			if strings.HasSuffix(tc.cfg.DataDir, filepath.Join("new", "etcd")) {
				if _, err := os.Stat(filepath.Dir(tc.cfg.DataDir)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the refused restore left %s behind (stat: %v)", filepath.Dir(tc.cfg.DataDir), err)
				}
			}
		})
	}
}

// listTree returns every path under root, or nil if root does not exist.
func listTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		out = append(out, p)
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}
