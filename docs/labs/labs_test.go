// Package labs checks that every lab in this directory runs as written:
// TestLabs builds minicp, minictl and kubelet-sim, runs each page's commands
// in a shell of its own (in a temporary directory, minicp on free ports) and
// compares what they print with the output the page shows — by shape and
// words, not by the numbers that change from run to run (match_test.go).
// The directives a page may carry are listed in parse_test.go.
//
//	go test ./docs/labs                        # every lab, four at a time (a few minutes)
//	go test ./docs/labs -short                 # the quick ones only
//	go test ./docs/labs -run 'TestLabs/02' -v  # one lab, with its timing
//	go test ./docs/labs -run 'TestLabs/02' -update   # write the run's output into the page where it differs
package labs

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	update = flag.Bool("update", false, "write each run's output into the lab page where it does not match")
	show   = flag.Bool("show", false, "log every block's output, matched or not")
)

// tools a lab may call besides the binaries built here; a lab that uses one
// the machine lacks is skipped.
var tools = []string{"kubectl", "jq", "curl", "etcdctl"}

func TestLabs(t *testing.T) {
	pages, err := filepath.Glob("[0-9][0-9]-*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no labs found: %v", err)
	}
	sort.Strings(pages)
	var (
		build    sync.Once
		bin      string
		buildErr error
		// mu guards timings: the labs run in parallel (each on its own
		// ports and directories; most of their time is spent waiting).
		mu      sync.Mutex
		timings = map[string]time.Duration{}
	)
	t.Cleanup(func() {
		if bin != "" && os.Getenv("MINICP_LAB_BIN") == "" {
			os.RemoveAll(bin)
		}
		var b strings.Builder
		for _, p := range pages {
			if d, ok := timings[p]; ok {
				fmt.Fprintf(&b, "\n  %-36s %6.1fs", p, d.Seconds())
			}
		}
		if b.Len() > 0 {
			t.Logf("lab check times:%s", b.String())
		}
	})
	for _, page := range longFirst(pages) {
		name := strings.TrimSuffix(page, ".md")
		t.Run(name, func(t *testing.T) {
			l, err := parseLab(page)
			if err != nil {
				t.Fatal(err)
			}
			if l.long && testing.Short() {
				t.Skip("a long lab; skipped under -short")
			}
			for _, tool := range toolsUsed(l) {
				if _, err := exec.LookPath(tool); err != nil {
					t.Skipf("the lab uses %s, which is not installed", tool)
				}
			}
			build.Do(func() { bin, buildErr = buildBinaries() })
			if buildErr != nil {
				t.Fatal(buildErr)
			}
			rank := labGate.rank()
			t.Parallel()
			labGate.enter(rank)
			defer labGate.leave()
			start := time.Now()
			runLab(t, l, bin)
			mu.Lock()
			timings[page] = time.Since(start)
			mu.Unlock()
			t.Logf("%s checked in %.1fs", page, time.Since(start).Seconds())
		})
	}
}

// longFirst orders the pages so that the labs that take minutes start
// first: the labs run several at a time, and a long lab started last would
// run alone at the end.
func longFirst(pages []string) []string {
	ordered := slices.Clone(pages)
	isLong := func(page string) bool {
		l, err := parseLab(page)
		return err == nil && l.long
	}
	slices.SortStableFunc(ordered, func(a, b string) int {
		la, lb := isLong(a), isLong(b)
		switch {
		case la && !lb:
			return -1
		case lb && !la:
			return 1
		}
		return 0
	})
	return ordered
}

var wordRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9_-]*`)

func toolsUsed(l *lab) []string {
	var used []string
	for _, tool := range tools {
		for _, s := range l.steps {
			if !s.skip && containsWord(s.commands, tool) {
				used = append(used, tool)
				break
			}
		}
	}
	return used
}

func containsWord(text, word string) bool {
	for _, w := range wordRE.FindAllString(text, -1) {
		if w == word {
			return true
		}
	}
	return false
}

// buildBinaries builds the three commands the labs run, once per test run.
// MINICP_LAB_BIN names a directory where they are built already (to
// iterate on one lab without relinking them on every run).
func buildBinaries() (string, error) {
	if dir := os.Getenv("MINICP_LAB_BIN"); dir != "" {
		return dir, nil
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(os.TempDir(), fmt.Sprintf("minicp-labs-bin-%d", os.Getpid()))
	cmd := exec.Command("go", "build", "-o", bin+"/", "./cmd/minicp", "./cmd/minictl", "./cmd/kubelet-sim")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// run is one lab being run: its directories, ports, terminals and the
// page updates -update will write. Only the lab's goroutine uses it.
type run struct {
	t         *testing.T
	tmp, work string
	state     string // the main terminal's saved shell state
	env       []string
	ports     ports
	terminals map[string]*shell
	jobs      []*exec.Cmd // the main terminal's blocks, with what they left in the background
	updates   map[*block]string
}

// runLab runs one page's steps in order.
func runLab(t *testing.T, l *lab, bin string) {
	r := &run{t: t, tmp: t.TempDir(), env: labEnv(bin), terminals: map[string]*shell{}, updates: map[*block]string{}}
	r.work, r.state = filepath.Join(r.tmp, "work"), filepath.Join(r.tmp, "shell-state")
	if err := os.Mkdir(r.work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writePrelude(r.state); err != nil {
		t.Fatal(err)
	}
	var err error
	if r.ports, err = freePorts(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // whatever the lab left running is stopped, terminals by Ctrl-C
		for _, term := range r.terminals {
			term.interrupt(15 * time.Second)
		}
		for _, j := range r.jobs {
			killGroup(j)
		}
	})
	for _, s := range l.steps {
		where := fmt.Sprintf("%s:%d", l.path, s.line)
		switch {
		case s.stop != "":
			r.stop(where, s.stop)
		case s.await != "":
			if term := r.terminals[s.await]; term != nil {
				r.await(where, s, term)
			} else {
				t.Errorf("%s: await %s: no such terminal", where, s.await)
			}
		case s.skip:
		case s.terminal != "":
			r.startTerminal(where, s)
		default:
			r.command(where, s)
		}
	}
	if *update && len(r.updates) > 0 {
		if err := writeUpdates(l.path, r.updates); err != nil {
			t.Error(err)
		}
	}
}

// stop is Ctrl-C in a terminal.
func (r *run) stop(where, name string) {
	term := r.terminals[name]
	if term == nil {
		r.t.Errorf("%s: stop %s: no such terminal", where, name)
		return
	}
	if !term.interrupt(15 * time.Second) {
		r.t.Errorf("%s: terminal %s did not end within 15s of Ctrl-C", where, name)
	}
	delete(r.terminals, name)
}

// startTerminal starts a step's commands in a terminal of their own and
// awaits the output the page shows for them.
func (r *run) startTerminal(where string, s step) {
	if old := r.terminals[s.terminal]; old != nil {
		old.interrupt(15 * time.Second)
	}
	log := filepath.Join(r.tmp, "terminal-"+s.terminal+".log")
	term, err := startTerminal(r.work, r.state, log, rewrite(s.commands, r.tmp, r.ports), r.env)
	if err != nil {
		r.t.Fatalf("%s: %v", where, err)
	}
	r.terminals[s.terminal] = term
	if s.output != nil && !s.output.unchecked {
		r.await(where, s, term)
	}
}

// await checks a terminal's output against the step's block.
func (r *run) await(where string, s step, term *shell) {
	got, ok := awaitOutput(term, s.output, r.tmp, r.ports, orDefault(s.timeout, 2*time.Minute))
	if !ok {
		report(r.t, where, s, got)
	} else if misses := nearMisses(s.output.text, got, true, s.output.near); len(misses) > 0 {
		r.t.Errorf("%s: figures the page states differ from the run's beyond their tolerance:\n    %s\nrun:\n%s",
			where, strings.Join(misses, "\n    "), indent(got))
	}
	noteUpdate(r.updates, s.output, got, true)
}

// command runs a step in the main terminal and compares its output.
func (r *run) command(where string, s step) {
	got, err := runBlock(context.Background(), r.work, r.state, rewrite(s.commands, r.tmp, r.ports), r.env,
		orDefault(s.timeout, 2*time.Minute), &r.jobs)
	got = unrewrite(got, r.tmp, r.ports)
	if *show {
		r.t.Logf("%s:\n%s\n%s", where, indent(s.commands), indent(got))
	}
	if err != nil {
		r.t.Errorf("%s: %v\ncommands:\n%s\noutput:\n%s", where, err, s.commands, got)
	}
	if s.output != nil {
		if !s.output.unchecked && !matches(s.output.text, got, s.output.contains, s.output.exact) {
			report(r.t, where, s, got)
		} else if misses := nearMisses(s.output.text, got, s.output.contains, s.output.near); !s.output.unchecked && len(misses) > 0 {
			r.t.Errorf("%s: figures the page states differ from the run's beyond their tolerance:\n    %s\ncommands:\n%s\nrun:\n%s",
				where, strings.Join(misses, "\n    "), indent(s.commands), indent(got))
		}
		noteUpdate(r.updates, s.output, got, s.output.contains) // -update refreshes unchecked blocks too
	}
}

// noteUpdate keeps what -update writes for a block: the page's text with
// the run's numbers where it matches, the run's output where it does not.
func noteUpdate(updates map[*block]string, b *block, got string, contains bool) {
	text, ok := refresh(b.text, got, contains)
	if !ok {
		text = got
	}
	if strings.TrimRight(text, "\n") != strings.TrimRight(b.text, "\n") {
		updates[b] = text
	}
}

// awaitOutput polls a terminal's output until it matches the block, the
// terminal ends, or the deadline passes. Lines an earlier block of the same
// terminal matched are not looked at again.
func awaitOutput(term *shell, b *block, tmp string, p ports, timeout time.Duration) (string, bool) {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	want := nonBlank(b.text)
	for {
		ended := false
		select {
		case <-term.done:
			ended = true
		default:
		}
		got := nonBlank(unrewrite(term.output(), tmp, p))[term.consumed:]
		if at, ok := align(want, got, true, b.exact); ok {
			base := term.consumed
			for _, j := range at {
				term.consumed = max(term.consumed, base+j+1)
			}
			return strings.Join(got, "\n"), true
		}
		if ended || time.Now().After(deadline) {
			return strings.Join(got, "\n"), false
		}
		<-tick.C
	}
}

func report(t *testing.T, where string, s step, got string) {
	t.Helper()
	mode := "line by line"
	if s.output.contains || s.terminal != "" {
		mode = "these lines in this order"
	}
	t.Errorf("%s: the output differs from the page (%s)\ncommands:\n%s\npage (line %d):\n%s\nrun:\n%s",
		where, mode, indent(s.commands), s.output.line, indent(s.output.text), indent(got))
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// labEnv is the learner's environment: the built binaries first on PATH,
// no KUBECONFIG until the lab exports one.
func labEnv(bin string) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch {
		case strings.HasPrefix(kv, "KUBECONFIG="):
		case strings.HasPrefix(kv, "PATH="):
			env = append(env, "PATH="+bin+string(os.PathListSeparator)+strings.TrimPrefix(kv, "PATH="))
		default:
			env = append(env, kv)
		}
	}
	return env
}

// writeUpdates replaces the text of mismatched output blocks with a run's.
func writeUpdates(path string, updates map[*block]string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	blocks := make([]*block, 0, len(updates))
	for b := range updates {
		blocks = append(blocks, b)
	}
	sort.Slice(blocks, func(i, j int) bool { return blocks[i].start > blocks[j].start })
	for _, b := range blocks {
		if b.end > len(data) || strings.TrimRight(string(data[b.start:b.end]), "\n") != strings.TrimRight(b.text, "\n") {
			return fmt.Errorf("%s changed during the run: not updating it", path)
		}
		text := strings.TrimRight(updates[b], "\n") + "\n"
		data = append(data[:b.start:b.start], append([]byte(text), data[b.end:]...)...)
	}
	return os.WriteFile(path, data, 0o644)
}
