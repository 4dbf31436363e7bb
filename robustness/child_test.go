//go:build linux

package robustness

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"minicp/internal/datadir"
)

// childOptions describe the minicp a test runs as a child process.
type childOptions struct {
	// Members is the number of embedded etcd members (1 or 3).
	Members int
	// Flags are extra minicp flags, e.g. "--etcd-compaction-interval=1s".
	Flags []string
	// NoFile, if not 0, is the descriptor limit (soft and hard) the child
	// starts with.
	NoFile int
}

// child is one minicp process, restarted on the same data directory and the
// same ports: the apiserver's URL and etcd's endpoints never change, so
// clients built once keep working across kills, as against a real server
// that crashed and came back.
type child struct {
	t       testing.TB
	opts    childOptions
	dataDir string
	logPath string // the child's stdout and stderr, all runs appended
	apiPort int
	etcd    int // first etcd client port; member i uses etcd+i
	peer    int // first etcd peer port

	cmd *exec.Cmd
	// exited is closed by the goroutine that waits for cmd once it has
	// returned; waitErr is set before that.
	exited  chan struct{}
	waitErr error
	starts  int

	// onEtcd, if set, is called once per start as soon as etcd serves
	// (minicp has written its etcd endpoints file), before the apiserver
	// is ready.
	onEtcd func()
}

// startChild starts minicp for t and registers its end with t.Cleanup.
func startChild(t testing.TB, opts childOptions, extra ...string) *child {
	t.Helper()
	if opts.Members == 0 {
		opts.Members = 1
	}
	dir := t.TempDir()
	c := &child{t: t, opts: opts, dataDir: filepath.Join(dir, "data"), logPath: filepath.Join(dir, "minicp.log")}
	ports := freePorts(t, 1+2*opts.Members)
	c.apiPort, c.etcd, c.peer = ports[0], ports[1], ports[1+opts.Members]
	t.Cleanup(c.stop)
	c.start(extra...)
	return c
}

// start runs the child and waits until it is ready: the kubeconfig it
// writes last is in place and /readyz answers 200. extra flags apply to
// this run only (e.g. --watch-cache=false).
func (c *child) start(extra ...string) {
	c.t.Helper()
	// Ready means these files were written by this run, not a killed one.
	os.Remove(c.kubeconfigPath())
	os.Remove(filepath.Join(c.dataDir, datadir.EtcdEndpointsFile))
	args := append([]string{
		"--data-dir=" + c.dataDir,
		"--port=" + strconv.Itoa(c.apiPort),
		"--etcd-members=" + strconv.Itoa(c.opts.Members),
		"--etcd-client-port=" + strconv.Itoa(c.etcd),
		"--etcd-peer-port=" + strconv.Itoa(c.peer),
		"--simulated-nodes=0",
	}, c.opts.Flags...)
	args = append(args, extra...)
	cmd := exec.Command(minicpBinary, args...)
	if c.opts.NoFile > 0 {
		// The shell lowers both limits, so minicp cannot raise its soft
		// limit past the hard one, then becomes minicp (same pid).
		script := fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, c.opts.NoFile)
		cmd = exec.Command("/bin/sh", append([]string{"-c", script, minicpBinary}, args...)...)
	}
	logFile, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		c.t.Fatalf("opening the child's log: %v", err)
	}
	fmt.Fprintf(logFile, "=== start %d: minicp %s\n", c.starts+1, strings.Join(args, " "))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// If the test binary dies, the child dies with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		c.t.Fatalf("starting minicp: %v", err)
	}
	c.cmd, c.exited, c.starts = cmd, make(chan struct{}), c.starts+1
	// The waiter: reaps the child whenever it exits, closes exited.
	go func(exited chan struct{}) {
		c.waitErr = cmd.Wait()
		logFile.Close()
		close(exited)
	}(c.exited)
	c.waitReady(90 * time.Second)
}

// waitReady polls for the kubeconfig and a 200 from /readyz.
func (c *child) waitReady(timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	etcdUp := false
	for {
		if !etcdUp && c.onEtcd != nil {
			if _, err := os.Stat(filepath.Join(c.dataDir, datadir.EtcdEndpointsFile)); err == nil {
				etcdUp = true
				c.onEtcd()
			}
		}
		if !c.alive() {
			c.t.Fatalf("minicp exited during start-up (%v); its log:\n%s", c.waitErr, c.logTail())
		}
		if _, err := os.Stat(c.kubeconfigPath()); err == nil && c.readyz() == nil && (etcdUp || c.onEtcd == nil) {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("minicp not ready after %s; its log:\n%s", timeout, c.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readyz asks /readyz once.
func (c *child) readyz() error {
	cfg, err := c.restConfigErr()
	if err != nil {
		return err
	}
	shared, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	hc := *shared // it may be http.DefaultClient: set the timeout on a copy
	hc.Timeout = 2 * time.Second
	resp, err := hc.Get(cfg.Host + "/readyz")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/readyz: %s", resp.Status)
	}
	return nil
}

// kill sends SIGKILL, as a crash or the OOM killer would, and reaps it.
func (c *child) kill() {
	c.t.Helper()
	if !c.alive() {
		c.t.Fatalf("minicp exited before it was killed (%v); its log:\n%s", c.waitErr, c.logTail())
	}
	c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.exited
}

// stop ends the child at cleanup: SIGTERM, then SIGKILL after 20 s.
func (c *child) stop() {
	if c.cmd == nil || !c.alive() {
		return
	}
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(20 * time.Second):
		c.cmd.Process.Signal(syscall.SIGKILL)
		<-c.exited
	}
}

// alive reports whether the current run has not exited.
func (c *child) alive() bool {
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// requireAlive fails the test if the child exited, with its log.
func (c *child) requireAlive(what string) {
	c.t.Helper()
	if !c.alive() {
		c.t.Fatalf("minicp exited %s (%v); its log:\n%s", what, c.waitErr, c.logTail())
	}
}

func (c *child) kubeconfigPath() string { return filepath.Join(c.dataDir, "kubeconfig") }

// restConfig is built from the kubeconfig minicp wrote, with whatever
// server, credentials and CA it holds, and no client-side rate limit.
func (c *child) restConfig() *rest.Config {
	c.t.Helper()
	cfg, err := c.restConfigErr()
	if err != nil {
		c.t.Fatalf("reading minicp's kubeconfig: %v", err)
	}
	return cfg
}

func (c *child) restConfigErr() (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfigPath())
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = -1, 0
	return cfg, nil
}

// clientset is a JSON clientset for the child.
func (c *child) clientset() *kubernetes.Clientset {
	c.t.Helper()
	cs, err := kubernetes.NewForConfig(c.restConfig())
	if err != nil {
		c.t.Fatalf("building a clientset: %v", err)
	}
	return cs
}

// etcdEndpoints are the child's etcd client URLs, one per member.
func (c *child) etcdEndpoints() []string {
	eps := make([]string, c.opts.Members)
	for i := range eps {
		eps[i] = "http://127.0.0.1:" + strconv.Itoa(c.etcd+i)
	}
	return eps
}

// logTail is the end of the child's log, for failure messages.
func (c *child) logTail() string {
	b, err := os.ReadFile(c.logPath)
	if err != nil {
		return err.Error()
	}
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	return string(b)
}

// freePorts finds n consecutive free loopback ports below the ephemeral
// range (so that port-0 listeners of other tests do not take them between
// restarts): the child keeps them across kills.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	for range 200 {
		base := 20000 + rand.IntN(12000)
		var ls []net.Listener
		for i := range n {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(base+i))
			if err != nil {
				break
			}
			ls = append(ls, l)
		}
		ok := len(ls) == n
		for _, l := range ls {
			l.Close()
		}
		if ok {
			ports := make([]int, n)
			for i := range ports {
				ports[i] = base + i
			}
			return ports
		}
	}
	t.Fatalf("no %d consecutive free ports found", n)
	return nil
}

// retry calls f until it succeeds or ctx ends, pausing briefly between
// tries; it returns f's last error.
func retry(ctx context.Context, f func() error) error {
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
