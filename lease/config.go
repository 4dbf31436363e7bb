package lease

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
)

// Upstream's values (kubelet, component-helpers' lease controller and
// kube-controller-manager's node lifecycle controller).
const (
	// DefaultLeaseDuration is the kubelet's --node-lease-duration-seconds.
	DefaultLeaseDuration = 40 * time.Second
	// DefaultStatusReportInterval is the kubelet's
	// nodeStatusReportFrequency: an unchanged status is posted this often.
	DefaultStatusReportInterval = 5 * time.Minute
	// DefaultGracePeriod is --node-monitor-grace-period.
	DefaultGracePeriod = 50 * time.Second
	// DefaultMonitorPeriod is --node-monitor-period.
	DefaultMonitorPeriod = 5 * time.Second
	// DefaultWorkers bounds the agent's concurrent requests.
	DefaultWorkers = 64

	// renewFraction: the kubelet renews every leaseDuration/4.
	renewFraction = 0.25
	// renewJitter: each renewal comes 0-4% late (wait.JitterUntil(..., 0.04)).
	renewJitter = 0.04
	// maxUpdateRetries bounds the lease writes of one renewal that are
	// refused with 409 and retried from a fresh read at once.
	maxUpdateRetries = 5
	// Failed requests are retried after 200 ms, doubling up to 7 s.
	initialBackoff = 200 * time.Millisecond
	maxBackoff     = 7 * time.Second
)

// NodeLeaseNamespace holds one Lease per node (corev1.NamespaceNodeLease).
const NodeLeaseNamespace = "kube-node-lease"

// SimulatedLabel marks the nodes an agent registers; its informer watches
// only nodes carrying it.
const SimulatedLabel = "minicp.io/simulated-node"

// AgentConfig configures an Agent. NewAgentConfig returns upstream's values.
type AgentConfig struct {
	// Nodes is how many nodes to simulate.
	Nodes int
	// NodePrefix names them: NodePrefix + index, e.g. "node-0".
	NodePrefix string
	// LeaseDuration is each Lease's leaseDurationSeconds (whole seconds);
	// the lease is renewed every quarter of it.
	LeaseDuration time.Duration
	// StatusReportInterval is how often an unchanged node status is posted.
	StatusReportInterval time.Duration
	// Workers is the number of goroutines making requests.
	Workers int
	// Clock is the agent's time (default: the real clock).
	Clock clock.WithTicker
	// Logger receives one line per state change; nil discards.
	Logger *slog.Logger
	// Recorder receives the kubelet's events (events.go); nil records none.
	Recorder events.EventRecorder
	// FinishPodDeletions makes the nodes finish the graceful deletion of
	// their pods, as a kubelet does (pods.go): one more watch, on pods.
	FinishPodDeletions bool
}

// NewAgentConfig returns upstream's timings for three nodes named node-N.
func NewAgentConfig() AgentConfig {
	return AgentConfig{
		Nodes:                3,
		NodePrefix:           "node-",
		LeaseDuration:        DefaultLeaseDuration,
		StatusReportInterval: DefaultStatusReportInterval,
		Workers:              DefaultWorkers,
		FinishPodDeletions:   true,
	}
}

// AddFlags binds the agent's knobs to flags (kubelet-sim's names).
func (c *AgentConfig) AddFlags(fs *flag.FlagSet) {
	fs.IntVar(&c.Nodes, "nodes", c.Nodes, "number of simulated nodes")
	fs.StringVar(&c.NodePrefix, "node-prefix", c.NodePrefix, "node names are this prefix followed by 0, 1, 2, ...")
	fs.DurationVar(&c.LeaseDuration, "lease-duration", c.LeaseDuration, "leaseDurationSeconds of each node's Lease (whole seconds); it is renewed every quarter of it")
	fs.DurationVar(&c.StatusReportInterval, "status-report-interval", c.StatusReportInterval, "how often an unchanged node status is posted (the kubelet's 5m)")
	fs.IntVar(&c.Workers, "workers", c.Workers, "goroutines making requests, shared by all nodes")
	fs.BoolVar(&c.FinishPodDeletions, "finish-pod-deletions", c.FinishPodDeletions, "watch the pods bound to the simulated nodes and finish their graceful deletion with a DELETE of grace 0, as a kubelet does")
}

// Validate reports every problem at once.
func (c *AgentConfig) Validate() error {
	var errs []error
	if c.Nodes < 0 {
		errs = append(errs, fmt.Errorf("--nodes must not be negative, got %d", c.Nodes))
	}
	if c.Nodes > MaxNodes {
		errs = append(errs, fmt.Errorf("--nodes must be at most %d, the addresses of %s, got %d", MaxNodes, NodeAddressRange, c.Nodes))
	}
	if msgs := validation.IsDNS1123Subdomain(c.NodePrefix + "0"); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--node-prefix %q does not make valid node names: %v", c.NodePrefix, msgs))
	}
	if c.LeaseDuration < time.Second || c.LeaseDuration%time.Second != 0 {
		errs = append(errs, fmt.Errorf("--lease-duration must be a whole number of seconds, at least 1s, got %s", c.LeaseDuration))
	}
	if c.StatusReportInterval <= 0 {
		errs = append(errs, fmt.Errorf("--status-report-interval must be positive, got %s", c.StatusReportInterval))
	}
	if c.Workers < 1 {
		errs = append(errs, fmt.Errorf("--workers must be at least 1, got %d", c.Workers))
	}
	return errors.Join(errs...)
}

// renewInterval is how often a lease is renewed: a quarter of its duration.
func (c *AgentConfig) renewInterval() time.Duration {
	return time.Duration(renewFraction * float64(c.LeaseDuration))
}

// ControllerConfig configures the node lifecycle Controller.
type ControllerConfig struct {
	// GracePeriod is how long a node may go without a sign of life before
	// it is marked Unknown (--node-monitor-grace-period).
	GracePeriod time.Duration
	// MonitorPeriod is how often nodes are checked (--node-monitor-period).
	MonitorPeriod time.Duration
	// Clock is the controller's time (default: the real clock).
	Clock clock.WithTicker
	// Logger receives one line per node state change; nil discards.
	Logger *slog.Logger
	// Recorder receives the controller's events (events.go); nil records none.
	Recorder events.EventRecorder
}

// NewControllerConfig returns upstream's defaults: 50 s grace, 5 s period.
func NewControllerConfig() ControllerConfig {
	return ControllerConfig{GracePeriod: DefaultGracePeriod, MonitorPeriod: DefaultMonitorPeriod}
}

// Validate reports every problem at once.
func (c *ControllerConfig) Validate() error {
	var errs []error
	if c.GracePeriod <= 0 {
		errs = append(errs, fmt.Errorf("--node-monitor-grace-period must be positive, got %s", c.GracePeriod))
	}
	if c.MonitorPeriod <= 0 {
		errs = append(errs, fmt.Errorf("--node-monitor-period must be positive, got %s", c.MonitorPeriod))
	}
	return errors.Join(errs...)
}

func orRealClock(c clock.WithTicker) clock.WithTicker {
	if c == nil {
		return clock.RealClock{}
	}
	return c
}

func orDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
