// Command kubelet-sim runs N simulated kubelets against any apiserver: each
// registers a Node and renews its Lease in kube-node-lease every quarter of
// the lease duration, as a kubelet does (M11 and M14). All
// nodes share one HTTP client and a bounded pool of workers. Every few
// seconds it prints renewals per second, renewal latency (p50, p99) and
// failures; Ctrl-C stops it cleanly.
//
//	kubelet-sim --kubeconfig minicp-data/kubeconfig --nodes 1000
//	kubelet-sim --nodes 1 --node-prefix victim-   # Ctrl-C it to see a node die
//	kubelet-sim --etcd-direct --nodes 5000        # the same load straight to etcd
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "kubelet-sim:", err)
		os.Exit(1)
	}
}
