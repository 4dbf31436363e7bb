// Command minictl is the lab tool for looking under minicp's apiserver:
// it reads etcd directly and shows what kube-apiserver-style storage looks
// like there — keys, revisions, and the protobuf envelope around each object.
//
//	minictl etcd get /registry/pods/default/nginx
//	minictl etcd get --prefix --keys-only /registry/
//	minictl etcd status
//	minictl etcd move-leader minicp-etcd-1
//	minictl lease ls
//
// It finds etcd from minicp's data directory (--data-dir, where minicp
// writes its etcd endpoints) or from --etcd-endpoints.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"minicp/controlplane"
)

const usage = `minictl: look at what minicp stores in etcd

Usage:
  minictl [ETCD] etcd get [--prefix] [--keys-only] [--rev N] KEY
  minictl [ETCD] etcd status
  minictl [ETCD] etcd move-leader MEMBER
  minictl [ETCD] etcd compact REVISION | --keep N
  minictl [ETCD] etcd defrag
  minictl [ETCD] etcd alarm list|disarm
  minictl [ETCD] lease ls [--prefix KEY]
  minictl [ETCD] snapshot save FILE
  minictl snapshot restore FILE --data-dir DIR [--bump-revision N --mark-compacted]
  minictl [ETCD] relist [--informers K] [--existing M] [--objects N] [--disconnect D] [--compact]
  minictl informer [--kubeconfig FILE] [--namespace NS]
  minictl fault add POINT [--delay D] [--error E] [--resource R] | fault ls | fault clear [POINT]
  minictl fault stop-member NAME | fault restart-member NAME

etcd get --consistency=s reads the member it reaches alone (serializable);
the default, l, is a quorum read. etcd status also reports the etcd that
holds events when minicp keeps them apart (--events-etcd-endpoints, or the
endpoints minicp wrote in --data-dir). fault speaks to a minicp started
with --enable-debug-faults (--server URL, or the kubeconfig in --data-dir);
POINT is admission, etcd.range, etcd.txn, etcd.watch or etcd.lease.

ETCD is --data-dir DIR (default ./minicp-data: the endpoints minicp wrote
there) or --etcd-endpoints URLS; without either, http://127.0.0.1:2379.

Global flags:
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "minictl:", err)
		os.Exit(1)
	}
}

var errUsage = errors.New("see minictl -h")

// clientCommands open their own connections (to one etcd member, or to the
// apiserver through a kubeconfig, by default the one in the data directory)
// instead of the shared etcd client.
var clientCommands = map[string]func(ctx context.Context, endpoints []string, dataDir string, args []string, out io.Writer) error{
	"snapshot": snapshotCommand,
	"relist":   relistCommand,
	"informer": informerCommand,
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("minictl", flag.ContinueOnError)
	flagEndpoints := fs.String("etcd-endpoints", "", "comma-separated etcd client URLs (default: those minicp wrote in --data-dir)")
	fs.StringVar(flagEndpoints, "endpoints", "", "old name of --etcd-endpoints")
	dataDir := fs.String("data-dir", "./minicp-data", "minicp's data directory, where it writes its etcd endpoints")
	flagEvents := fs.String("events-etcd-endpoints", "", "comma-separated client URLs of the etcd holding events, when minicp keeps them apart (default: those minicp wrote in --data-dir)")
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		return err
	}
	endpoints := etcdEndpoints(*flagEndpoints, *dataDir)
	rest := fs.Args()
	if len(rest) > 0 && rest[0] == "fault" {
		return faultCommand(ctx, *dataDir, rest[1:], out)
	}
	if len(rest) > 0 {
		if cmd, ok := clientCommands[rest[0]]; ok {
			return cmd(ctx, endpoints, *dataDir, rest[1:], out)
		}
	}
	if len(rest) < 2 || (rest[0] != "etcd" && rest[0] != "lease") {
		fs.Usage()
		return errUsage
	}
	client, err := newEtcdClient(endpoints) // its error names the endpoints
	if err != nil {
		return err
	}
	defer client.Close()
	if rest[0] == "lease" {
		return leaseCommand(ctx, client, rest[1:], out)
	}

	switch rest[1] {
	case "get":
		return etcdGet(ctx, client, rest[2:], out)
	case "status":
		if err := etcdStatus(ctx, client, out); err != nil {
			return err
		}
		return eventsEtcdStatus(ctx, client, eventsEtcdEndpoints(*flagEvents, *dataDir), out)
	case "move-leader":
		return moveLeader(ctx, client, rest[2:], out)
	case "compact":
		return etcdCompact(ctx, client, rest[2:], out)
	case "defrag":
		return etcdDefrag(ctx, client, out)
	case "alarm":
		return etcdAlarm(ctx, client, rest[2:], out)
	default:
		fs.Usage()
		return fmt.Errorf("unknown command %q: %w", "etcd "+rest[1], errUsage)
	}
}

// defaultEtcdEndpoint is etcd's own default, and minicp's.
const defaultEtcdEndpoint = "http://127.0.0.1:2379"

// etcdEndpoints picks the endpoints: --etcd-endpoints if given, else those
// minicp wrote in its data directory, else etcd's default.
func etcdEndpoints(flagValue, dataDir string) []string {
	if eps := splitComma(flagValue); len(eps) > 0 {
		return eps
	}
	if eps, err := controlplane.ReadEtcdEndpoints(dataDir); err == nil {
		return eps
	}
	return []string{defaultEtcdEndpoint}
}
