package labs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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

	// mu guards out: the process's goroutines copy output into it while
	// the lab's goroutine reads it.
	mu  sync.Mutex
	out bytes.Buffer
}

func (s *shell) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
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
func runBlock(ctx context.Context, workDir, stateFile, commands string, env []string, timeout time.Duration) (string, error) {
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
	if err := cmd.Start(); err != nil {
		return "", err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // ends when bash exits; killGroup below ends it on timeout
	select {
	case err := <-exited:
		killGroup(cmd) // anything the block left behind
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

// startTerminal starts a background terminal running commands.
func startTerminal(workDir, stateFile, commands string, env []string) (*shell, error) {
	script := fmt.Sprintf(". %[1]q 2>/dev/null\n%[2]s\n", stateFile, commands)
	s := &shell{dir: workDir, env: env, done: make(chan struct{})}
	s.cmd = exec.Command("bash", "--noprofile", "--norc", "-c", script)
	s.cmd.Dir, s.cmd.Env = workDir, env
	s.cmd.Stdout, s.cmd.Stderr = s, s
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { // closes done when the terminal's command ends
		_ = s.cmd.Wait()
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

// rewrite turns a lab's command text into what the harness runs: binaries
// built once instead of `go run`, the lab's /tmp paths inside the test's
// temporary directory, and minicp on free ports (the flags go first, so a
// lab that names its own ports still gets them).
func rewrite(commands, tmp string) string {
	r := strings.NewReplacer(
		"go run ./cmd/minicp", "minicp --port 0 --etcd-client-port 0 --etcd-peer-port 0",
		"go run ./cmd/minictl", "minictl",
		"go run ./cmd/kubelet-sim", "kubelet-sim",
		"/tmp/minicp-lab", filepath.Join(tmp, "minicp-lab"),
		"http://127.0.0.1:8080", "$(__lab_server)",
	)
	return r.Replace(commands)
}

// unrewrite puts the lab's own paths back into a run's output.
func unrewrite(output, tmp string) string {
	return strings.ReplaceAll(output, filepath.Join(tmp, "minicp-lab"), "/tmp/minicp-lab")
}

// prelude defines what rewrite refers to.
const prelude = `__lab_server() { kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}'; }
`

func writePrelude(stateFile string) error {
	return os.WriteFile(stateFile, []byte(prelude), 0o644)
}
