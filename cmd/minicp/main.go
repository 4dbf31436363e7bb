// Command minicp runs a miniature Kubernetes control plane on loopback:
// an embedded etcd member, the apiserver, and the default namespaces.
// It prints the line that points kubectl at it and stops cleanly on Ctrl-C
// (or SIGTERM), at any stage, within controlplane.StopLimit; a second
// Ctrl-C stops it at once.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"minicp/controlplane"
)

func main() {
	cfg := controlplane.NewConfig()
	fs := flag.NewFlagSet("minicp", flag.ExitOnError)
	cfg.AddFlags(fs)
	fs.Parse(os.Args[1:]) // ExitOnError: Parse exits on a bad flag.

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The stopper: on the first signal it gives the default behaviour
	// back (a second Ctrl-C kills) and exits if the stop outlasts the limit.
	go func() {
		<-ctx.Done()
		stop()
		time.AfterFunc(controlplane.StopLimit, func() {
			fmt.Fprintf(os.Stderr, "minicp: still stopping after %s; exiting without waiting further\n", controlplane.StopLimit)
			os.Exit(1)
		})
	}()
	if err := controlplane.Run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "minicp:", err)
		os.Exit(1)
	}
}
