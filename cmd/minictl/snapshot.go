package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"minicp/embedetcd"
	"minicp/internal/datadir"
)

// snapshotCommand is `snapshot save FILE` (from the first endpoint) and
// `snapshot restore FILE --data-dir DIR [--bump-revision N --mark-compacted]`.
func (a *app) snapshotCommand() *cobra.Command {
	save := &cobra.Command{
		Use:   "save FILE",
		Short: "save a snapshot of etcd (its first endpoint) to FILE",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError(cmd, "snapshot save takes one FILE")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			eps, err := a.etcd()
			if err != nil {
				return err
			}
			if err := a.probeEtcd(cmd.Context(), eps); err != nil {
				return err
			}
			return snapshotSave(cmd.Context(), eps.urls[0], args[0], a.out)
		},
	}
	var o restoreOptions
	restore := &cobra.Command{
		Use:   "restore FILE --data-dir DIR [--bump-revision N --mark-compacted]",
		Short: "restore a snapshot into a new minicp data directory",
		Long: `snapshot restore writes a snapshot into a new minicp data directory: here
--data-dir names the directory to create, which must not hold etcd data.
Restoring rolls etcd's revision back; --bump-revision N --mark-compacted
raise it past every resourceVersion clients may hold and make them relist.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || o.dataDir == "" {
				return usageError(cmd, "usage: snapshot restore FILE --data-dir DIR [--bump-revision N --mark-compacted]")
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error { return snapshotRestore(args[0], o, a.out) },
	}
	// This --data-dir shadows the global one: the directory to create.
	restore.Flags().StringVar(&o.dataDir, "data-dir", "", "minicp data directory to create (the --data-dir minicp will start with); must not hold etcd data")
	restore.Flags().Uint64Var(&o.bump, "bump-revision", 0, "raise etcd's revision by this much after the restore, past every resourceVersion clients may hold (requires --mark-compacted)")
	restore.Flags().BoolVar(&o.markCompacted, "mark-compacted", false, "mark the bumped revision compacted, so that resumed watches get 410 Gone and clients relist (requires --bump-revision)")
	return group("snapshot", "save etcd to a file, or restore a file into a new data directory", save, restore)
}

func snapshotSave(ctx context.Context, endpoint, file string, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	info, err := embedetcd.SaveSnapshot(ctx, endpoint, file, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "saved a snapshot of %s at revision %d to %s (%s, %d keys)\n",
		endpoint, info.Revision, info.Path, bytesString(info.Size), info.Keys)
	return nil
}

// restoreOptions are the flags of `snapshot restore`.
type restoreOptions struct {
	dataDir       string
	bump          uint64
	markCompacted bool
}

func snapshotRestore(file string, o restoreOptions, out io.Writer) error {
	// The member lands where minicp looks for it: under the data
	// directory's etcd directory, with the default member name.
	res, err := embedetcd.RestoreSnapshot(embedetcd.RestoreConfig{
		SnapshotPath:  file,
		DataDir:       datadir.Etcd(o.dataDir),
		Name:          embedetcd.NewConfig().Name,
		BumpRevision:  o.bump,
		MarkCompacted: o.markCompacted,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "restored %s (taken at revision %d) into %s\n", file, res.SnapshotRevision, res.MemberDir)
	if res.CompactedRevision > 0 {
		fmt.Fprintf(out, "etcd will start at revision %d (%d + %d), compacted there: a watch resuming from any older resourceVersion gets 410 Gone and relists\n",
			res.Revision, res.SnapshotRevision, o.bump)
	} else {
		fmt.Fprintf(out, "etcd will start at revision %d: the next writes reuse revisions clients may already have seen\n", res.Revision)
	}
	fmt.Fprintf(out, "start minicp on it: go run ./cmd/minicp --data-dir %s\n", o.dataDir)
	return nil
}
