package labs

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A lab's shells run in process groups of their own (minicp, kubectl
// proxy, watches). A test binary that dies without running its clean-ups
// (go test's timeout panic, a kill) must not leave them running: a reaper,
// a second copy of this test binary started first, keeps the groups'
// numbers and kills every group when the test binary's end of its stdin
// closes without the word that all is stopped already.

const reaperEnv = "MINICP_LABS_REAPER"

var reaper struct {
	mu sync.Mutex
	in io.WriteCloser // nil when no reaper runs
}

// startReaper starts the reaper. Without one the labs still run; only a
// test binary killed mid-lab would leave processes behind.
func startReaper() {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), reaperEnv+"=1")
	// Its own group: Ctrl-C in the terminal running go test reaches the
	// test binary and the labs, not the reaper that cleans up after them.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "labs: no reaper for the labs' processes: %v\n", err)
		return
	}
	go func() { _ = cmd.Wait() }()
	reaper.in = in
}

// watchGroup tells the reaper of a process group to kill if the test
// binary dies.
func watchGroup(pgid int) {
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	if reaper.in != nil {
		_, _ = fmt.Fprintf(reaper.in, "%d\n", pgid)
	}
}

// stopReaper lets the reaper go without killing anything: the labs'
// clean-ups stopped their processes, and a group's number may be reused.
func stopReaper() {
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	if reaper.in != nil {
		_, _ = io.WriteString(reaper.in, "done\n")
		_ = reaper.in.Close()
		reaper.in = nil
	}
}

// reap is the reaper's main: it reads group numbers until "done" (nothing
// to do) or the end of its input (the test binary died: kill them all).
func reap(in io.Reader) {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	groups := reapGroups(in)
	for _, pgid := range groups {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// reapGroups returns the groups to kill: none when the input ends with
// "done", every group named otherwise.
func reapGroups(in io.Reader) []int {
	var groups []int
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "done" {
			return nil
		}
		if pgid, err := strconv.Atoi(line); err == nil && pgid > 1 {
			groups = append(groups, pgid)
		}
	}
	return groups
}

func TestReaperKillsTheGroupsWhenItsInputEndsUnfinished(t *testing.T) {
	sleeper := exec.Command("sleep", "300")
	sleeper.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- sleeper.Wait() }()
	t.Cleanup(func() { killGroup(sleeper) })

	r := exec.Command(os.Args[0])
	r.Env = append(os.Environ(), reaperEnv+"=1")
	in, err := r.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(in, "%d\n", sleeper.Process.Pid)
	in.Close() // as when the test binary dies: its end of the pipe closes
	if err := r.Wait(); err != nil {
		t.Fatalf("the reaper: %v", err)
	}
	select {
	case err := <-waited:
		if !strings.Contains(fmt.Sprint(err), "killed") {
			t.Errorf("the group's process ended with %v, want killed", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("the group's process still runs 30 s after the reaper ended")
	}
}

func TestReaperLeavesTheGroupsAloneWhenToldAllIsDone(t *testing.T) {
	if got := reapGroups(strings.NewReader("101\n202\ndone\n")); len(got) != 0 {
		t.Errorf("after done the reaper would kill %v", got)
	}
	if got := reapGroups(strings.NewReader("101\n202\n")); fmt.Sprint(got) != "[101 202]" {
		t.Errorf("on an unfinished input the reaper would kill %v, want [101 202]", got)
	}
}
