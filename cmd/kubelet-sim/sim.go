package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/client-go/tools/clientcmd"

	"minicp/controlplane"
	"minicp/lease"
)

// config is kubelet-sim's command line.
type config struct {
	agent         lease.AgentConfig
	kubeconfig    string
	dataDir       string
	etcdEndpoints string
	etcdDirect    bool
	reportEvery   time.Duration
	duration      time.Duration
	verbose       bool
}

func parseFlags(args []string, out io.Writer) (*config, error) {
	cfg := &config{agent: lease.NewAgentConfig()}
	cfg.agent.NodePrefix = "sim-node-"
	fs := flag.NewFlagSet("kubelet-sim", flag.ContinueOnError)
	fs.SetOutput(out)
	cfg.agent.AddFlags(fs)
	fs.StringVar(&cfg.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the apiserver (default $KUBECONFIG, else <data-dir>/kubeconfig)")
	fs.StringVar(&cfg.dataDir, "data-dir", "./minicp-data", "minicp's data directory, where the kubeconfig and the etcd endpoints are found when not given")
	fs.StringVar(&cfg.etcdEndpoints, "etcd-endpoints", "", "comma-separated etcd client URLs, to report revision and database growth (default: those in <data-dir>, if any)")
	fs.BoolVar(&cfg.etcdDirect, "etcd-direct", false, "write the same renewal load straight to etcd, one transaction per renewal, under /kubelet-sim-direct/: the baseline for the apiserver's overhead")
	fs.DurationVar(&cfg.reportEvery, "report-interval", 5*time.Second, "how often to print a summary line")
	fs.DurationVar(&cfg.duration, "duration", 0, "stop after this long (0 = run until Ctrl-C)")
	fs.BoolVar(&cfg.verbose, "v", false, "log node state changes (registration, failures, lapses)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %v", fs.Args())
	}
	if cfg.reportEvery <= 0 {
		return nil, fmt.Errorf("--report-interval must be positive, got %s", cfg.reportEvery)
	}
	if cfg.kubeconfig == "" {
		cfg.kubeconfig = filepath.Join(cfg.dataDir, "kubeconfig")
	}
	if cfg.verbose {
		cfg.agent.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return cfg, cfg.agent.Validate()
}

func run(ctx context.Context, args []string, out io.Writer) error {
	cfg, err := parseFlags(args, out)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if cfg.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.duration)
		defer cancel()
	}
	etcd, err := cfg.etcdClient()
	if err != nil {
		return err
	}
	if etcd != nil {
		defer etcd.Close()
	}
	if cfg.etcdDirect {
		if etcd == nil {
			return errors.New("--etcd-direct needs etcd: pass --etcd-endpoints or a --data-dir where minicp runs")
		}
		return runDirect(ctx, cfg, etcd, out)
	}
	return runAgent(ctx, cfg, etcd, out)
}

// etcdClient connects to --etcd-endpoints, or to the endpoints minicp
// wrote in --data-dir; nil when neither is there.
func (cfg *config) etcdClient() (*clientv3.Client, error) {
	var eps []string
	if cfg.etcdEndpoints != "" {
		eps = strings.Split(cfg.etcdEndpoints, ",")
	} else if found, err := controlplane.ReadEtcdEndpoints(cfg.dataDir); err == nil {
		eps = found
	}
	if len(eps) == 0 {
		return nil, nil
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 3 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("connecting to etcd at %v: %w", eps, err)
	}
	return c, nil
}

// runAgent runs the simulated nodes against the apiserver until ctx ends.
func runAgent(ctx context.Context, cfg *config, etcd *clientv3.Client, out io.Writer) error {
	rc, err := clientcmd.BuildConfigFromFlags("", cfg.kubeconfig)
	if err != nil {
		return fmt.Errorf("reading kubeconfig %s: %w (start minicp first, or pass --kubeconfig)", cfg.kubeconfig, err)
	}
	cs, closeIdle, err := lease.NewClientset(rc, cfg.agent.Workers)
	if err != nil {
		return err
	}
	defer closeIdle()
	agent, err := lease.NewAgent(cfg.agent, cs)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "kubelet-sim: %s against %s; lease %s renewed every %s; %d workers\n",
		describeNodes(cfg.agent), rc.Host, cfg.agent.LeaseDuration, cfg.agent.LeaseDuration/4, cfg.agent.Workers)
	agent.Start()
	r := newReporter(out, cfg, etcd)
	r.loop(ctx, agent.Snapshot)
	agent.Stop()
	r.summary(agent.Snapshot())
	return nil
}

// describeNodes names the simulated nodes: "1 node (victim-0)",
// "3 nodes (node-0..node-2)".
func describeNodes(c lease.AgentConfig) string {
	switch c.Nodes {
	case 0:
		return "0 nodes"
	case 1:
		return fmt.Sprintf("1 node (%s0)", c.NodePrefix)
	}
	return fmt.Sprintf("%d nodes (%s0..%s%d)", c.Nodes, c.NodePrefix, c.NodePrefix, c.Nodes-1)
}
