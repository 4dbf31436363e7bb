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
// writes its etcd endpoints) or from --etcd-endpoints. The command tree is
// in commands.go; each command's file holds its cobra.Command and its work.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "minictl:", err)
		os.Exit(1)
	}
}

// run runs minictl with args, writing to out; help is written to out too.
func run(ctx context.Context, args []string, out io.Writer) error {
	root := newRootCommand(out, os.Stderr)
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}
