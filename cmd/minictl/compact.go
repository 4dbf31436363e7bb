package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"

	"minicp/embedetcd"
)

func (a *app) compactCommand() *cobra.Command {
	var keep int64
	cmd := &cobra.Command{
		Use:   "compact REVISION | --keep N",
		Short: "drop etcd's history below a revision, and show the database size",
		Long: `etcd compact drops etcd's history below REVISION (or keeps only the last N
revisions with --keep N) and shows what that means for clients and for the
database size.`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 1 && keep < 0:
				if _, err := strconv.ParseInt(args[0], 10, 64); err != nil {
					return usageError(cmd, "etcd compact takes a revision number, got %q", args[0])
				}
				return nil
			case len(args) == 0 && keep >= 0:
				return nil
			}
			return usageError(cmd, "etcd compact takes a REVISION or --keep N, not both or neither")
		},
		RunE: a.withEtcd(func(ctx context.Context, client *clientv3.Client, args []string) error {
			rev := int64(-1)
			if len(args) == 1 {
				rev, _ = strconv.ParseInt(args[0], 10, 64) // checked by Args
			}
			return etcdCompact(ctx, client, rev, keep, a.out)
		}),
	}
	cmd.Flags().Int64Var(&keep, "keep", -1, "compact so that only the last N revisions stay readable (0 keeps only the current state)")
	return cmd
}

func (a *app) defragCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "defrag",
		Short: "rewrite every member's database file without the pages compaction freed",
		Args:  noArgs,
		RunE: a.withEtcd(func(ctx context.Context, client *clientv3.Client, _ []string) error {
			return etcdDefrag(ctx, client, a.out)
		}),
	}
}

// etcdCompact runs `etcd compact REVISION` (rev >= 0) or `etcd compact
// --keep N`: it drops etcd's history below a revision and shows what that
// means for clients and for the database size.
func etcdCompact(ctx context.Context, client *clientv3.Client, rev, keep int64, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var res embedetcd.CompactResult
	var err error
	if rev >= 0 {
		res, err = embedetcd.Compact(ctx, client, rev)
	} else {
		res, err = embedetcd.CompactKeep(ctx, client, keep)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "compacted etcd to revision %d (was %d; current revision %d)\n", res.Revision, res.Previous, res.Current)
	fmt.Fprintf(out, "reads and watches from revisions below %d now fail (410 Gone through the apiserver)\n", res.Revision)
	return printDBSizes(ctx, client, out, "compaction frees pages inside the file; run `minictl etcd defrag` to give them back to the file system")
}

// etcdDefrag runs `etcd defrag`: every member rewrites its database file
// without the pages compaction freed.
func etcdDefrag(ctx context.Context, client *clientv3.Client, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	results, err := embedetcd.Defragment(ctx, client)
	for _, r := range results {
		fmt.Fprintf(out, "%s  db size %s -> %s (in use %s)\n", r.Endpoint, bytesString(r.Before), bytesString(r.After), bytesString(r.InUse))
	}
	return err
}

// printDBSizes prints every member's database size and the part of it in
// use, once that part has settled, then hint.
func printDBSizes(ctx context.Context, client *clientv3.Client, out io.Writer, hint string) error {
	for _, ep := range client.Endpoints() {
		st, err := settledStatus(ctx, client, ep)
		if err != nil {
			return fmt.Errorf("etcd member %s: %w", ep, err)
		}
		fmt.Fprintf(out, "%s  db size %s (in use %s)\n", ep, bytesString(st.DbSize), bytesString(st.DbSizeInUse))
	}
	fmt.Fprintln(out, hint)
	return nil
}

// Compaction's freed pages show in a member's "in use" size only once its
// backend has committed the last deletions (it commits every 100 ms) and
// no read transaction still holds the pages; until then Status reports
// the size from before. settledStatus reads Status every statusSettleEvery
// until the size in use is the same statusSettleReads times in a row, for
// at most statusSettleWithin, and returns the last reading.
const (
	statusSettleEvery  = 150 * time.Millisecond
	statusSettleReads  = 3
	statusSettleWithin = 3 * time.Second
)

func settledStatus(ctx context.Context, client *clientv3.Client, ep string) (*clientv3.StatusResponse, error) {
	deadline := time.Now().Add(statusSettleWithin)
	var last *clientv3.StatusResponse
	for same := 0; ; {
		st, err := client.Status(ctx, ep)
		if err != nil {
			return nil, err
		}
		if last != nil && st.DbSizeInUse == last.DbSizeInUse {
			same++
		} else {
			same = 1
		}
		last = st
		if same >= statusSettleReads || time.Now().After(deadline) {
			return last, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(statusSettleEvery):
		}
	}
}

// bytesString prints a size the way etcd's logs do: "2.1 MB".
func bytesString(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
