package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"minicp/embedetcd"
)

// etcdCompact runs `etcd compact REVISION` or `etcd compact --keep N`:
// it drops etcd's history below a revision and shows what that means for
// clients and for the database size.
func etcdCompact(ctx context.Context, client *clientv3.Client, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("etcd compact", flag.ContinueOnError)
	keep := fs.Int64("keep", -1, "compact so that only the last N revisions stay readable (0 keeps only the current state)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var res embedetcd.CompactResult
	var err error
	switch {
	case fs.NArg() == 1 && *keep < 0:
		rev, perr := strconv.ParseInt(fs.Arg(0), 10, 64)
		if perr != nil {
			return fmt.Errorf("etcd compact takes a revision number, got %q: %w", fs.Arg(0), errUsage)
		}
		res, err = embedetcd.Compact(ctx, client, rev)
	case fs.NArg() == 0 && *keep >= 0:
		res, err = embedetcd.CompactKeep(ctx, client, *keep)
	default:
		return fmt.Errorf("etcd compact takes a REVISION or --keep N, not both or neither: %w", errUsage)
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
// use, then hint.
func printDBSizes(ctx context.Context, client *clientv3.Client, out io.Writer, hint string) error {
	for _, ep := range client.Endpoints() {
		st, err := client.Status(ctx, ep)
		if err != nil {
			return fmt.Errorf("etcd member %s: %w", ep, err)
		}
		fmt.Fprintf(out, "%s  db size %s (in use %s)\n", ep, bytesString(st.DbSize), bytesString(st.DbSizeInUse))
	}
	fmt.Fprintln(out, hint)
	return nil
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
