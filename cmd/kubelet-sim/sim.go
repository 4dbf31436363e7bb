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

	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/events"

	"minicp/internal/datadir"
	"minicp/lease"
)

// config is kubelet-sim's command line.
type config struct {
	agent         lease.AgentConfig
	kubeconfig    string
	dataDir       string
	etcdEndpoints string
	etcdDirect    bool
	plainHTTP     bool
	reportEvery   time.Duration
	duration      time.Duration
	verbose       bool
	recordEvents  bool
}

const long = `kubelet-sim runs N simulated kubelets against any apiserver: each
registers a Node and renews its Lease in kube-node-lease every quarter of
the lease duration, as a kubelet does. It prints renewals per second,
renewal latency and failures every --report-interval, and a summary when
it stops (--duration, or Ctrl-C). It finds the apiserver in the
kubeconfig minicp wrote in --data-dir (or --kubeconfig), and checks within
a second that something answers there.`

// newCommand is kubelet-sim's command line: -h and --help print the help
// and run nothing.
func newCommand(out io.Writer) *cobra.Command {
	cfg := &config{agent: lease.NewAgentConfig()}
	cfg.agent.NodePrefix = "sim-node-"
	cmd := &cobra.Command{
		Use:     "kubelet-sim [flags]",
		Short:   "simulated kubelets that register Nodes and renew their Leases",
		Long:    long,
		Example: "  kubelet-sim --data-dir minicp-data --nodes 1000\n  kubelet-sim --nodes 1 --node-prefix victim-   # Ctrl-C it to see a node die\n  kubelet-sim --etcd-direct --nodes 5000        # the same load straight to etcd",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unexpected arguments %v", args)
			}
			return nil
		},
		SilenceUsage:  true, // an error names its fix; the usage would bury it
		SilenceErrors: true, // main prints the error once
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.complete(); err != nil {
				return err
			}
			return simulate(cmd.Context(), cfg, out)
		},
	}
	agentFlags := flag.NewFlagSet("agent", flag.ContinueOnError)
	cfg.agent.AddFlags(agentFlags)
	f := cmd.Flags()
	f.AddGoFlagSet(agentFlags)
	f.StringVar(&cfg.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the apiserver (default $KUBECONFIG, else <data-dir>/kubeconfig)")
	f.StringVar(&cfg.dataDir, "data-dir", "./minicp-data", "minicp's data directory, where the kubeconfig and the etcd endpoints are found when not given")
	f.StringVar(&cfg.etcdEndpoints, "etcd-endpoints", "", "comma-separated etcd client URLs, to report revision and database growth (default: those in <data-dir>, if any)")
	f.BoolVar(&cfg.etcdDirect, "etcd-direct", false, "write the same renewal load straight to etcd, one transaction per renewal, under /kubelet-sim-direct/: the baseline for the apiserver's overhead")
	f.BoolVar(&cfg.plainHTTP, "plain-http", false, "talk plain HTTP to the kubeconfig's server, with its token (minicp answers plain HTTP beside TLS on loopback unless --tls-only): what TLS costs a heartbeat")
	f.DurationVar(&cfg.reportEvery, "report-interval", 5*time.Second, "how often to print a summary line")
	f.DurationVar(&cfg.duration, "duration", 0, "stop after this long (0 = run until Ctrl-C)")
	f.BoolVar(&cfg.recordEvents, "record-events", false, "record the kubelet's node events (Starting, NodeHasSufficientMemory, ..., NodeReady), as a kubelet does; off by default, so that thousands of nodes measure heartbeats alone")
	f.BoolVarP(&cfg.verbose, "v", "v", false, "log node state changes (registration, failures, lapses)")
	cmd.SetOut(out)
	cmd.SetErr(out)
	return cmd
}

// complete checks the flags and fills in what follows from them.
func (cfg *config) complete() error {
	if cfg.reportEvery <= 0 {
		return fmt.Errorf("--report-interval must be positive, got %s", cfg.reportEvery)
	}
	if cfg.kubeconfig == "" {
		cfg.kubeconfig = filepath.Join(cfg.dataDir, "kubeconfig")
	}
	if cfg.verbose {
		cfg.agent.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return cfg.agent.Validate()
}

// run runs kubelet-sim with args, writing to out.
func run(ctx context.Context, args []string, out io.Writer) error {
	cmd := newCommand(out)
	cmd.SetArgs(args)
	return cmd.ExecuteContext(ctx)
}

// simulate runs the nodes (or their renewals straight to etcd) until ctx
// ends or --duration passes.
func simulate(ctx context.Context, cfg *config, out io.Writer) error {
	if cfg.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.duration)
		defer cancel()
	}
	etcd, err := cfg.etcdClient(ctx)
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
func (cfg *config) etcdClient(ctx context.Context) (*clientv3.Client, error) {
	var eps []string
	from := "from --etcd-endpoints"
	if cfg.etcdEndpoints != "" {
		eps = strings.Split(cfg.etcdEndpoints, ",")
	} else if found, err := datadir.ReadEtcdEndpoints(cfg.dataDir); err == nil {
		eps, from = found, "the endpoints minicp wrote in "+filepath.Join(cfg.dataDir, datadir.EtcdEndpointsFile)
	}
	if len(eps) == 0 {
		return nil, nil
	}
	if err := datadir.Probe(ctx, eps); err != nil {
		return nil, &datadir.NotRunningError{What: "etcd", URLs: eps, From: from, DataDir: cfg.dataDir, Err: err}
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
	if cfg.plainHTTP {
		// A kubeconfig's token goes only to an https server, so the
		// scheme changes after the kubeconfig is read.
		rc.Host = "http://" + strings.TrimPrefix(rc.Host, "https://")
		rc.TLSClientConfig = rest.TLSClientConfig{}
	}
	if err := datadir.Probe(ctx, []string{rc.Host}); err != nil {
		return &datadir.NotRunningError{What: "the apiserver", URLs: []string{rc.Host}, From: "the server of kubeconfig " + cfg.kubeconfig, DataDir: cfg.dataDir, Err: err}
	}
	cs, closeIdle, err := lease.NewClientset(rc, cfg.agent.Workers)
	if err != nil {
		return err
	}
	defer closeIdle()
	if cfg.recordEvents {
		// The broadcaster writes the events from its own goroutine, with
		// events.k8s.io/v1 when the apiserver serves it; Shutdown ends it.
		broadcaster := events.NewEventBroadcasterAdapterWithContext(ctx, cs)
		stopEvents := make(chan struct{})
		broadcaster.StartRecordingToSink(stopEvents)
		defer broadcaster.Shutdown()
		defer close(stopEvents)
		cfg.agent.Recorder = broadcaster.NewRecorder(lease.KubeletComponent)
	}
	if err := checkServiceAddresses(ctx, cs); err != nil {
		return err
	}
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

// checkServiceAddresses refuses to start nodes whose addresses the
// cluster's Services already use: kubelet-sim does not know the
// apiserver's Service range, but the kubernetes Service's ClusterIP, the
// range's first address, says whether it overlaps the nodes' range.
func checkServiceAddresses(ctx context.Context, cs kubernetes.Interface) error {
	svc, err := cs.CoreV1().Services(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		return nil // no such Service (or no right to read it): nothing to compare
	}
	return lease.CheckServiceAddress(svc.Spec.ClusterIP)
}
