package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// leaseInfo is one etcd lease as `minictl lease ls` shows it.
type leaseInfo struct {
	id        clientv3.LeaseID
	granted   int64 // TTL it was granted with, seconds
	remaining int64 // seconds left; -1 if it expired meanwhile
	keys      []string
}

func (a *app) leaseCommand() *cobra.Command {
	var prefix string
	ls := &cobra.Command{
		Use:   "ls",
		Short: "every etcd lease with its granted and remaining TTL and the keys bound to it",
		Args:  noArgs,
		RunE: a.withEtcd(func(ctx context.Context, client *clientv3.Client, _ []string) error {
			return leaseList(ctx, client, prefix, a.out)
		}),
	}
	ls.Flags().StringVar(&prefix, "prefix", "", "show only leases with a key starting with this prefix, e.g. /registry/leases/kube-node-lease/")
	return group("lease", "etcd's leases: the TTLs keys are bound to", ls)
}

// leaseList runs `minictl lease ls`: every etcd lease with its granted
// and remaining TTL and the keys bound to it (M12).
func leaseList(ctx context.Context, client *clientv3.Client, prefix string, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	resp, err := client.Leases(ctx)
	if err != nil {
		return fmt.Errorf("listing etcd leases: %w", err)
	}
	var infos []leaseInfo
	for _, l := range resp.Leases {
		ttl, err := client.TimeToLive(ctx, l.ID, clientv3.WithAttachedKeys())
		if err != nil {
			return fmt.Errorf("etcd lease %x: %w", l.ID, err)
		}
		info := leaseInfo{id: l.ID, granted: ttl.GrantedTTL, remaining: ttl.TTL}
		for _, k := range ttl.Keys {
			info.keys = append(info.keys, string(k))
		}
		slices.Sort(info.keys)
		if prefix == "" || slices.ContainsFunc(info.keys, func(k string) bool { return strings.HasPrefix(k, prefix) }) {
			infos = append(infos, info)
		}
	}
	slices.SortFunc(infos, func(a, b leaseInfo) int {
		return strings.Compare(strings.Join(a.keys, ","), strings.Join(b.keys, ","))
	})
	printLeases(out, infos)
	return nil
}

func printLeases(out io.Writer, infos []leaseInfo) {
	fmt.Fprintf(out, "# %d etcd lease(s)\n", len(infos))
	if len(infos) == 0 {
		return
	}
	fmt.Fprintf(out, "%-16s  %7s  %9s  %s\n", "ID", "GRANTED", "REMAINING", "KEYS")
	for _, l := range infos {
		remaining := fmt.Sprintf("%ds", l.remaining)
		if l.remaining < 0 {
			remaining = "expired"
		}
		fmt.Fprintf(out, "%016x  %6ds  %9s  %s\n", int64(l.id), l.granted, remaining, keyList(l.keys))
	}
}

// keyList shows up to three keys and how many more there are.
func keyList(keys []string) string {
	switch {
	case len(keys) == 0:
		return "(none)"
	case len(keys) <= 3:
		return strings.Join(keys, " ")
	}
	return fmt.Sprintf("%s (+%d more)", strings.Join(keys[:3], " "), len(keys)-3)
}

// leaseTTL describes the time left on a key's lease for `etcd get`.
func leaseTTL(ctx context.Context, client *clientv3.Client, id clientv3.LeaseID) string {
	ttl, err := client.TimeToLive(ctx, id)
	switch {
	case err != nil:
		return fmt.Sprintf(" (TTL unknown: %v)", err)
	case ttl.TTL < 0:
		return " (expired: etcd is deleting the key)"
	}
	return fmt.Sprintf(" (granted %ds, %ds left; see minictl lease ls)", ttl.GrantedTTL, ttl.TTL)
}
