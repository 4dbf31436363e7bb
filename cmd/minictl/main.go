// Command minictl is the lab tool for looking under minicp's apiserver:
// it reads etcd directly and shows what kube-apiserver-style storage looks
// like there — keys, revisions, and the protobuf envelope around each object.
//
//	minictl etcd get /registry/pods/default/nginx
//	minictl etcd get --prefix --keys-only /registry/
//	minictl etcd status
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

const usage = `minictl: look at what minicp stores in etcd

Usage:
  minictl [--endpoints URLS] etcd get [--prefix] [--keys-only] [--rev N] KEY
  minictl [--endpoints URLS] etcd status
  minictl [--endpoints URLS] etcd compact REVISION | --keep N
  minictl [--endpoints URLS] etcd defrag
  minictl [--endpoints URLS] etcd alarm list|disarm
  minictl [--endpoints URL]  snapshot save FILE
  minictl snapshot restore FILE --data-dir DIR [--bump-revision N --mark-compacted]
  minictl [--endpoints URLS] relist [--informers K] [--existing M] [--objects N] [--disconnect D] [--compact]
  minictl informer [--kubeconfig FILE] [--namespace NS]

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
// apiserver through a kubeconfig) instead of the shared etcd client.
var clientCommands = map[string]func(ctx context.Context, endpoints, args []string, out io.Writer) error{
	"snapshot": snapshotCommand,
	"relist":   relistCommand,
	"informer": informerCommand,
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("minictl", flag.ContinueOnError)
	endpoints := fs.String("endpoints", "http://127.0.0.1:2379", "comma-separated etcd client URLs (minicp prints its etcd URL at start-up)")
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) > 0 {
		if cmd, ok := clientCommands[rest[0]]; ok {
			return cmd(ctx, splitComma(*endpoints), rest[1:], out)
		}
	}
	if len(rest) < 2 || rest[0] != "etcd" {
		fs.Usage()
		return errUsage
	}
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   splitComma(*endpoints),
		DialTimeout: 3 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return fmt.Errorf("connecting to etcd at %s: %w", *endpoints, err)
	}
	defer client.Close()

	switch rest[1] {
	case "get":
		return etcdGet(ctx, client, rest[2:], out)
	case "status":
		return etcdStatus(ctx, client, out)
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
