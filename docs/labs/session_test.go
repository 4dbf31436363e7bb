package labs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// shell is one bash a lab's commands run in, as a learner's terminal: the
// main one keeps variables and the current directory from block to block;
// a named terminal runs one long command (minicp, a watch) in the background.
type shell struct {
	cmd  *exec.Cmd
	dir  string
	env  []string
	done chan struct{} // closed when the process has exited (terminals only)
	// consumed counts the non-blank output lines earlier output blocks
	// matched; only the lab's goroutine uses it.
	consumed int

	// mu guards out and log: the process's goroutines copy output into
	// them while the lab's goroutine reads it.
	mu  sync.Mutex
	out bytes.Buffer
	log *os.File // a terminal's output, also kept in a file other commands can read
}

func (s *shell) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log != nil {
		_, _ = s.log.Write(p)
	}
	return s.out.Write(p)
}

func (s *shell) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// runBlock runs one sh block in a fresh bash that first sources the
// session's state (variables, functions, the current directory) and saves it
// again at the end, so that `rev=$(...)` in one block is $rev in the next.
// It returns the block's combined stdout and stderr.
func runBlock(ctx context.Context, workDir, stateFile, commands string, env []string, timeout time.Duration, groups *[]*exec.Cmd) (string, error) {
	script := fmt.Sprintf(`
. %[1]q 2>/dev/null
%[2]s
__lab_status=$?
{ declare -p | grep -vE '^declare -[a-zA-Z-]*r|^declare -[a-zA-Z-]* (BASH|FUNCNAME|GROUPS|PIPESTATUS|RANDOM|SRANDOM|SECONDS|LINENO|SHLVL|PPID|EUID|UID|SHELLOPTS|BASHOPTS|DIRSTACK|EPOCH|OPTIND|OPTERR|IFS|PWD|OLDPWD|__lab_status|_)[=A-Z_]' ; declare -f ; echo "cd $(printf %%q "$PWD")"; } > %[1]q.new 2>/dev/null
mv %[1]q.new %[1]q
exit $__lab_status
`, stateFile, commands)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	s := &shell{}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-c", script)
	cmd.Dir, cmd.Env = workDir, env
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = s, s
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Jobs a block leaves in the background (`cmd &`) keep running, as in a
	// terminal, until the lab ends; their output is not waited for.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return "", err
	}
	watchGroup(cmd.Process.Pid)
	*groups = append(*groups, cmd)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // ends when bash exits; killGroup below ends it on timeout
	select {
	case err := <-exited:
		if errors.Is(err, exec.ErrWaitDelay) {
			err = nil
		}
		if _, isExit := err.(*exec.ExitError); isExit {
			err = nil // a failing command can be the lesson; its output says so
		}
		return s.output(), err
	case <-ctx.Done():
		killGroup(cmd)
		<-exited
		return s.output(), fmt.Errorf("still running after %v", timeout)
	}
}

// startTerminal starts a background terminal running commands; its output
// also goes to logFile.
func startTerminal(workDir, stateFile, logFile, commands string, env []string) (*shell, error) {
	script := fmt.Sprintf(". %[1]q 2>/dev/null\n%[2]s\n", stateFile, commands)
	log, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	s := &shell{dir: workDir, env: env, done: make(chan struct{}), log: log}
	s.cmd = exec.Command("bash", "--noprofile", "--norc", "-c", script)
	s.cmd.Dir, s.cmd.Env = workDir, env
	s.cmd.Stdout, s.cmd.Stderr = s, s
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	watchGroup(s.cmd.Process.Pid)
	go func() { // closes done when the terminal's command ends
		_ = s.cmd.Wait()
		s.mu.Lock()
		_ = s.log.Close()
		s.log = nil
		s.mu.Unlock()
		close(s.done)
	}()
	return s, nil
}

// interrupt is Ctrl-C: SIGINT to the terminal's process group, then up to
// grace for it to end before SIGKILL. It reports whether it ended in time.
func (s *shell) interrupt(grace time.Duration) bool {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-s.done:
		return true
	case <-time.After(grace):
		killGroup(s.cmd)
		<-s.done
		return false
	}
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// ports are the ones a lab's run uses in place of the defaults its text
// shows: fixed for the whole lab, so that a minicp restarted on the same
// data directory is found where it was, as with the defaults.
type ports struct {
	api, client, peer, proxy int
}

// freePorts picks ports nobody listens on: the apiserver's, kubectl
// proxy's, and for etcd three clients and three peers, each also 100 up
// (for an events member).
func freePorts() (ports, error) {
	for try := 0; try < 100; try++ {
		// Below the kernel's ephemeral range (32768 and up on Linux), where
		// other programs' port-0 listeners could take them mid-lab.
		base := 10000 + rand.IntN(22000)
		p := ports{api: base, proxy: base + 1, client: base + 10, peer: base + 20}
		if allFree(p.api, p.proxy, p.client, p.client+1, p.client+2, p.peer, p.peer+1, p.peer+2,
			p.client+100, p.peer+100) {
			return p, nil
		}
	}
	return ports{}, errors.New("no free ports found")
}

func allFree(ports ...int) bool {
	for _, port := range ports {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			return false
		}
		l.Close()
	}
	return true
}

// defaults maps each default port a lab's text names to the run's.
func (p ports) defaults() map[int]int {
	return map[int]int{
		8080: p.api, 8001: p.proxy,
		2379: p.client, 2380: p.client + 1, 2381: p.client + 2, 2479: p.client + 100,
		12380: p.peer, 12381: p.peer + 1, 12382: p.peer + 2,
	}
}

var addressRE = regexp.MustCompile(`(127\.0\.0\.1|localhost):([0-9]+)\b`)

// rewrite turns a lab's command text into what the harness runs: binaries
// built once instead of `go run`, the lab's /tmp paths inside the test's
// temporary directory, and the run's ports for the defaults.
func rewrite(commands, tmp string, p ports) string {
	commands = strings.NewReplacer(
		"go run ./cmd/minicp", fmt.Sprintf("command minicp --port %d --etcd-client-port %d --etcd-peer-port %d", p.api, p.client, p.peer),
		"go run ./cmd/minictl", "command minictl",
		"go run ./cmd/kubelet-sim", "command kubelet-sim",
		"/tmp/minicp-lab", filepath.Join(tmp, "minicp-lab"),
		"kubectl proxy --port=8001", fmt.Sprintf("kubectl proxy --port=%d", p.proxy),
	).Replace(commands)
	return mapPorts(commands, p.defaults())
}

// unrewrite puts the lab's own paths and default ports back into a run's
// output.
func unrewrite(output, tmp string, p ports) string {
	output = strings.ReplaceAll(output, filepath.Join(tmp, "minicp-lab"), "/tmp/minicp-lab")
	back := map[int]int{}
	for def, run := range p.defaults() {
		back[run] = def
	}
	return mapPorts(output, back)
}

func mapPorts(text string, m map[int]int) string {
	return addressRE.ReplaceAllStringFunc(text, func(addr string) string {
		sub := addressRE.FindStringSubmatch(addr)
		port, _ := strconv.Atoi(sub[2])
		if to, ok := m[port]; ok {
			return fmt.Sprintf("%s:%d", sub[1], to)
		}
		return addr
	})
}

// prelude is sourced before a lab's first command.
const prelude = ``

func writePrelude(stateFile string) error {
	return os.WriteFile(stateFile, []byte(prelude), 0o644)
}
