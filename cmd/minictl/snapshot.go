package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"minicp/controlplane"
	"minicp/embedetcd"
)

// snapshotCommand runs `snapshot save FILE` (from the first endpoint) and
// `snapshot restore FILE --data-dir DIR [--bump-revision N --mark-compacted]`.
func snapshotCommand(ctx context.Context, endpoints []string, _ string, args []string, out io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("snapshot takes save or restore: %w", errUsage)
	}
	switch args[0] {
	case "save":
		return snapshotSave(ctx, endpoints, args[1:], out)
	case "restore":
		return snapshotRestore(args[1:], out)
	}
	return fmt.Errorf("unknown command %q: %w", "snapshot "+args[0], errUsage)
}

func snapshotSave(ctx context.Context, endpoints []string, args []string, out io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("snapshot save takes one FILE: %w", errUsage)
	}
	if len(endpoints) == 0 {
		return fmt.Errorf("snapshot save needs an etcd endpoint: %w", errUsage)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	info, err := embedetcd.SaveSnapshot(ctx, endpoints[0], args[0], nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "saved a snapshot of %s at revision %d to %s (%s, %d keys)\n",
		endpoints[0], info.Revision, info.Path, bytesString(info.Size), info.Keys)
	return nil
}

func snapshotRestore(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("snapshot restore", flag.ContinueOnError)
	dataDir := fs.String("data-dir", "", "minicp data directory to create (the --data-dir minicp will start with); must not hold etcd data")
	bump := fs.Uint64("bump-revision", 0, "raise etcd's revision by this much after the restore, past every resourceVersion clients may hold (requires --mark-compacted)")
	markCompacted := fs.Bool("mark-compacted", false, "mark the bumped revision compacted, so that resumed watches get 410 Gone and clients relist (requires --bump-revision)")
	// The file comes first in the usage line, but may also follow the flags.
	var file string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		file, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if file == "" && fs.NArg() == 1 {
		file = fs.Arg(0)
	} else if fs.NArg() != 0 {
		file = ""
	}
	if file == "" || *dataDir == "" {
		return fmt.Errorf("usage: snapshot restore FILE --data-dir DIR [--bump-revision N --mark-compacted]: %w", errUsage)
	}
	res, err := controlplane.RestoreSnapshot(*dataDir, file, *bump, *markCompacted)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "restored %s (taken at revision %d) into %s\n", file, res.SnapshotRevision, res.MemberDir)
	if res.CompactedRevision > 0 {
		fmt.Fprintf(out, "etcd will start at revision %d (%d + %d), compacted there: a watch resuming from any older resourceVersion gets 410 Gone and relists\n",
			res.Revision, res.SnapshotRevision, *bump)
	} else {
		fmt.Fprintf(out, "etcd will start at revision %d: the next writes reuse revisions clients may already have seen\n", res.Revision)
	}
	fmt.Fprintf(out, "start minicp on it: go run ./cmd/minicp --data-dir %s\n", *dataDir)
	return nil
}
