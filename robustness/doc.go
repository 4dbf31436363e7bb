// Package robustness is minicp's robustness suite: tests that treat minicp
// as a learner's machine treats it, a process that can be killed at any
// moment, flooded, fed garbage and read by many watchers at once, and that
// check what must survive all of that.
//
// Every test starts minicp as a child process built from ./cmd/minicp (with
// fsync on, as `go run ./cmd/minicp` runs), reads its credentials from the
// kubeconfig it writes into its data directory, and kills it with SIGKILL
// where a test needs a crash. The suite checks:
//
//   - durability (durability_test.go): writers record every acknowledged
//     create, update and delete while minicp is killed at random moments;
//     after each restart every acknowledged write is there with its value,
//     and no resourceVersion goes back, per object or for the list (M4).
//
// The tests are written in _test.go files only: `go test ./robustness` runs
// the short version, which CI runs with everything else. The long version
// runs more kill rounds, more writers and longer rounds:
//
//	go test ./robustness -count=1 -timeout 60m -robustness.long -v
//
// docs/ROBUSTNESS.md records what the long run found and how to read its
// summary lines.
package robustness
