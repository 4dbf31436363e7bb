//go:build linux

package robustness

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"minicp/internal/testsupport"
)

// run is one minicp process started by a lifecycle test, on free ports.
type run struct {
	cmd *exec.Cmd
	out *testsupport.SyncBuffer // stdout and stderr together
	// exited is closed by the waiting goroutine once cmd has returned;
	// err is set before that.
	exited chan struct{}
	err    error
}

// startRun starts minicp on dataDir with free ports and the given flags.
func startRun(t *testing.T, dataDir string, flags ...string) *run {
	t.Helper()
	args := append([]string{"--data-dir=" + dataDir, "--port=0", "--etcd-client-port=0", "--etcd-peer-port=0"}, flags...)
	r := &run{cmd: exec.Command(minicpBinary, args...), out: &testsupport.SyncBuffer{}, exited: make(chan struct{})}
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("starting minicp: %v", err)
	}
	go func() {
		r.err = r.cmd.Wait()
		close(r.exited)
	}()
	t.Cleanup(func() {
		r.cmd.Process.Kill()
		<-r.exited
	})
	return r
}

// waitExit waits up to limit for the process to exit.
func (r *run) waitExit(t *testing.T, limit time.Duration, what string) {
	t.Helper()
	select {
	case <-r.exited:
	case <-time.After(limit):
		t.Fatalf("minicp still running %s after %s; its output:\n%s", what, limit, r.out.String())
	}
}

// waitReady waits for the kubeconfig, written last, in dataDir.
func (r *run) waitReady(t *testing.T, dataDir string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dataDir, "kubeconfig")); err == nil {
			return
		}
		select {
		case <-r.exited:
			t.Fatalf("minicp exited during start-up (%v):\n%s", r.err, r.out.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("minicp not ready after 60s:\n%s", r.out.String())
		}
	}
}

// A second minicp on a data directory in use fails at once, naming the
// directory and the pid of the one that holds it; once the first stops,
// the directory is free again.
func TestSecondMinicpOnTheSameDataDirectoryFailsAtOnceNamingTheFirst(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	first := startRun(t, dir, "--simulated-nodes=0")
	first.waitReady(t, dir)

	start := time.Now()
	second := startRun(t, dir, "--simulated-nodes=0")
	second.waitExit(t, 5*time.Second, "on a data directory in use")
	want := fmt.Sprintf("data directory %s is in use by another minicp (pid %d)", dir, first.cmd.Process.Pid)
	if second.err == nil || !strings.Contains(second.out.String(), want) {
		t.Fatalf("second minicp: exit %v, output:\n%s\nwant a failure containing %q", second.err, second.out.String(), want)
	}
	t.Logf("refused after %s: %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(second.out.String()))

	first.cmd.Process.Signal(syscall.SIGTERM)
	first.waitExit(t, 10*time.Second, "after SIGTERM")
	os.Remove(filepath.Join(dir, "kubeconfig"))
	third := startRun(t, dir, "--simulated-nodes=0")
	third.waitReady(t, dir)
}

// A taken apiserver port is refused with the hint the etcd ports give.
func TestApiserverPortInUseSuggestsPortZero(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	first := startRun(t, dir, "--simulated-nodes=0")
	first.waitReady(t, dir)
	port := portOf(t, dir)
	second := startRun(t, filepath.Join(t.TempDir(), "other"), "--simulated-nodes=0", "--port="+strconv.Itoa(port))
	second.waitExit(t, 30*time.Second, "on a port in use")
	want := fmt.Sprintf("apiserver port %d is already in use: pass --port 0 for a free port", port)
	if !strings.Contains(second.out.String(), want) {
		t.Fatalf("output:\n%s\nwant %q", second.out.String(), want)
	}
}

// portOf reads the apiserver's port from the kubeconfig minicp wrote.
func portOf(t *testing.T, dataDir string) int {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dataDir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(cfg.Host)
	if err != nil || u.Hostname() != "127.0.0.1" {
		t.Fatalf("no loopback server in the kubeconfig: %q (%v)", cfg.Host, err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// SIGINT and SIGTERM stop minicp within 10 s at any stage: at once, while
// etcd starts, while the apiserver and the simulated nodes start, and
// once it serves. The moments are offsets from the start; the last is
// "ready" (the kubeconfig is written).
func TestSignalsStopMinicpWithinTenSecondsAtAnyStage(t *testing.T) {
	const ready = -1
	moments := []time.Duration{0, 30 * time.Millisecond, 150 * time.Millisecond, 400 * time.Millisecond, time.Second, ready}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		for _, at := range moments {
			name := fmt.Sprintf("%s after %s", sig, at)
			if at == ready {
				name = sig.String() + " once ready"
			}
			t.Run(name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "data")
				r := startRun(t, dir, "--etcd-members=3")
				if at == ready {
					r.waitReady(t, dir)
				} else {
					select {
					case <-r.exited:
						t.Fatalf("minicp exited before the signal (%v):\n%s", r.err, r.out.String())
					case <-time.After(at): // the moment chosen, not a wait for a condition
					}
				}
				sent := time.Now()
				r.cmd.Process.Signal(sig)
				r.waitExit(t, 10*time.Second, "after "+sig.String())
				t.Logf("stopped %s after the signal (%v)", time.Since(sent).Round(time.Millisecond), r.err)
				if strings.Contains(r.out.String(), "exiting without waiting further") {
					t.Errorf("the stop needed the watchdog:\n%s", r.out.String())
				}
			})
		}
	}
}
