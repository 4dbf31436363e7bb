//go:build linux

package robustness

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// long selects the long run: more kill rounds, longer rounds, more writers.
// CI runs the short one; docs/ROBUSTNESS.md records a long one.
var long = flag.Bool("robustness.long", false, "run the long robustness suite (tens of kill rounds; minutes)")

// minicpBinary is the minicp executable TestMain builds from ./cmd/minicp
// for every test to run as a child process.
var minicpBinary string

// TestMain builds cmd/minicp once into a temporary directory, runs the
// tests, and removes the binary.
func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "minicp-robustness-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "robustness:", err)
		os.Exit(1)
	}
	minicpBinary = filepath.Join(dir, "minicp")
	if err := buildMinicp(minicpBinary); err != nil {
		fmt.Fprintln(os.Stderr, "robustness: building cmd/minicp:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildMinicp runs `go build -o out minicp/cmd/minicp`, without the race
// detector: the child is the program under test, not the test.
func buildMinicp(out string) error {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			return fmt.Errorf("no go command to build with: %w", err)
		}
	}
	cmd := exec.Command(goTool, "build", "-o", out, "minicp/cmd/minicp")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// pick returns the short run's value, or the long run's with -robustness.long.
func pick[T any](short, longRun T) T {
	if *long {
		return longRun
	}
	return short
}
