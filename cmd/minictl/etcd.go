package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"minicp/embedetcd"
	"minicp/registry"
)

// etcdCommand is `minictl etcd ...`: etcd's own view, as etcdctl gives it.
func (a *app) etcdCommand() *cobra.Command {
	status := &cobra.Command{
		Use:   "status",
		Short: "per member: revision, raft term and leader, database size; members, compaction, alarms",
		Long: `etcd status prints, per member, the figures labs watch (revision, raft
term and leader, database size), then the members, the compacted revision
and the alarms. It also reports the etcd that holds events when minicp
keeps them apart (--events-etcd-endpoints, or the endpoints minicp wrote in
--data-dir).`,
		Args: noArgs,
		RunE: a.withEtcd(func(ctx context.Context, client *clientv3.Client, _ []string) error {
			if err := etcdStatus(ctx, client, a.out); err != nil {
				return err
			}
			events := a.eventsEtcd()
			if len(events.urls) > 0 {
				if err := a.probeEtcd(ctx, events); err != nil {
					return err
				}
			}
			return eventsEtcdStatus(ctx, client, events.urls, a.out)
		}),
	}
	return group("etcd", "read and operate the etcd minicp stores its objects in",
		a.etcdGetCommand(), status, a.moveLeaderCommand(), a.compactCommand(), a.defragCommand(), a.alarmCommand())
}

// getOptions are the flags of `etcd get`.
type getOptions struct {
	prefix, keysOnly bool
	rev              int64
	consistency      string
}

func (a *app) etcdGetCommand() *cobra.Command {
	var o getOptions
	cmd := &cobra.Command{
		Use:   "get KEY",
		Short: "print keys with their revisions and the stored value taken apart",
		Long: `etcd get prints keys with their revisions and, unless --keys-only, the
stored value taken apart: envelope first, then the decoded object.
--consistency=s reads the member it reaches alone (serializable); the
default, l, is a quorum read.`,
		Example: "  minictl etcd get /registry/pods/default/nginx\n  minictl etcd get --prefix --keys-only /registry/",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError(cmd, "etcd get takes one KEY, e.g. /registry/pods/default/nginx")
			}
			return nil
		},
		RunE: a.withEtcd(func(ctx context.Context, client *clientv3.Client, args []string) error {
			return etcdGet(ctx, client, args[0], o, a.out)
		}),
	}
	f := cmd.Flags()
	f.BoolVar(&o.prefix, "prefix", false, "get every key starting with KEY")
	f.BoolVar(&o.keysOnly, "keys-only", false, "print keys and revisions, not values")
	f.Int64Var(&o.rev, "rev", 0, "read at this revision (0 = current); a compacted revision fails")
	f.StringVar(&o.consistency, "consistency", "l", "l (linearizable: a quorum read, fails without a leader) or s (serializable: whatever the member reached holds, possibly stale)")
	return cmd
}

// noArgs refuses positional arguments, pointing to the command's help.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError(cmd, "%s takes no arguments, got %q", commandName(cmd), args)
	}
	return nil
}

// etcdGet prints keys with their revisions and, unless --keys-only, the
// stored value taken apart: envelope first, then the decoded object.
func etcdGet(ctx context.Context, client *clientv3.Client, key string, o getOptions, out io.Writer) error {
	opts := []clientv3.OpOption{clientv3.WithRev(o.rev)}
	if o.prefix {
		opts = append(opts, clientv3.WithPrefix())
	}
	switch o.consistency {
	case "l", "linearizable":
	case "s", "serializable":
		opts = append(opts, clientv3.WithSerializable())
	default:
		return fmt.Errorf("--consistency %q: want l (linearizable) or s (serializable)", o.consistency)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := client.Get(ctx, key, opts...)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "# etcd revision %d, %d key(s)\n", resp.Header.Revision, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		if o.keysOnly {
			fmt.Fprintf(out, "%s  create_revision=%d mod_revision=%d version=%d\n", kv.Key, kv.CreateRevision, kv.ModRevision, kv.Version)
			continue
		}
		printKV(ctx, client, out, kv)
	}
	return nil
}

// printKV shows one key: its revisions, its etcd lease and what is left of
// it, and the stored value taken apart.
func printKV(ctx context.Context, client *clientv3.Client, out io.Writer, kv *mvccpb.KeyValue) {
	fmt.Fprintf(out, "key:             %s\n", kv.Key)
	fmt.Fprintf(out, "create_revision: %d\n", kv.CreateRevision)
	fmt.Fprintf(out, "mod_revision:    %d   <- the object's resourceVersion\n", kv.ModRevision)
	fmt.Fprintf(out, "version:         %d\n", kv.Version)
	if kv.Lease != 0 {
		fmt.Fprintf(out, "lease:           %016x%s\n", kv.Lease, leaseTTL(ctx, client, clientv3.LeaseID(kv.Lease)))
	}
	fmt.Fprintf(out, "value:           %d bytes, %s\n", len(kv.Value), describeValue(kv.Value))
	fmt.Fprintf(out, "first bytes:     % x\n", kv.Value[:min(24, len(kv.Value))])
	printStoredValue(out, kv.Value)
	if _, ok := customResourceKind(kv.Value); ok {
		// Its schema is its CRD's, which the apiserver applies: the stored
		// JSON above is all there is to decode.
		fmt.Fprintln(out)
		return
	}
	obj, _, err := registry.Codecs.UniversalDeserializer().Decode(kv.Value, nil, nil)
	if err != nil {
		fmt.Fprintf(out, "decoded:         not a Kubernetes object (%v)\n\n", err)
		return
	}
	pretty, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		fmt.Fprintf(out, "decoded:         %v\n\n", err)
		return
	}
	fmt.Fprintf(out, "decoded:\n%s\n\n", pretty)
}

// statusTimeout bounds each question etcd status asks, so that one member
// that is down (or a cluster without quorum) costs seconds, not the whole
// report: without quorum, the per-endpoint lines still show what each
// surviving member thinks, and the cluster-wide questions say they failed.
const statusTimeout = 2 * time.Second

// etcdStatus prints, per endpoint, the figures labs watch: revision, raft
// term and leader, database size, and alarms.
func etcdStatus(ctx context.Context, client *clientv3.Client, out io.Writer) error {
	for _, ep := range client.Endpoints() {
		epCtx, cancel := context.WithTimeout(ctx, statusTimeout)
		st, err := client.Status(epCtx, ep)
		cancel()
		if err != nil {
			fmt.Fprintf(out, "%s  unreachable: %v\n\n", ep, err)
			continue
		}
		fmt.Fprintf(out, "endpoint:       %s\n", ep)
		fmt.Fprintf(out, "member:         %x (leader %x, is leader: %t)\n", st.Header.MemberId, st.Leader, st.Header.MemberId == st.Leader)
		fmt.Fprintf(out, "raft term:      %d   raft index: %d\n", st.RaftTerm, st.RaftIndex)
		fmt.Fprintf(out, "revision:       %d\n", st.Header.Revision)
		fmt.Fprintf(out, "db size:        %d bytes (in use %d)\n", st.DbSize, st.DbSizeInUse)
		fmt.Fprintf(out, "version:        %s\n\n", st.Version)
	}
	askCtx, cancel := context.WithTimeout(ctx, statusTimeout)
	err := printMembers(askCtx, client, out)
	cancel()
	if err != nil {
		fmt.Fprintf(out, "members:        unknown (%v: does the cluster have a quorum?)\n", err)
		return nil
	}
	askCtx, cancel = context.WithTimeout(ctx, statusTimeout)
	compacted, err := embedetcd.CompactedRevision(askCtx, client)
	cancel()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "compacted:      %d   (revisions below it are gone; 0 = never compacted)\n", compacted)
	askCtx, cancel = context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	alarms, err := client.AlarmList(askCtx)
	if err != nil {
		return err
	}
	if len(alarms.Alarms) == 0 {
		fmt.Fprintln(out, "alarms:         none")
	}
	for _, a := range alarms.Alarms {
		fmt.Fprintf(out, "alarm:          %s on member %x\n", a.Alarm, a.MemberID)
	}
	return nil
}

func splitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
