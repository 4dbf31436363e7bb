// Command minicp runs a miniature Kubernetes control plane on loopback:
// an embedded etcd member, the apiserver, and the default namespaces.
// It prints the line that points kubectl at it and stops cleanly on Ctrl-C.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"minicp/controlplane"
)

func main() {
	cfg := controlplane.NewConfig()
	fs := flag.NewFlagSet("minicp", flag.ExitOnError)
	cfg.AddFlags(fs)
	fs.Parse(os.Args[1:]) // ExitOnError: Parse exits on a bad flag.

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := controlplane.Run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "minicp:", err)
		os.Exit(1)
	}
}
