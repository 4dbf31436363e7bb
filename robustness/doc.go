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
//     and no resourceVersion goes back, per object or for the list (M4);
//   - watches (watch_test.go, rawwatch_test.go, informer_test.go,
//     checker_test.go, truth_test.go): raw HTTP watches and client-go
//     informers, through the watch cache and without it, compared event by
//     event with etcd's own history, read from etcd directly, while leaders
//     move between three members, compaction runs every second and minicp
//     is killed and restarted (M5, M6, M8). checker_self_test.go shows the
//     checks fail on every kind of violation they look for;
//   - bad input (badinput_test.go, mutated_test.go): a table of malformed
//     requests, each answered with a Status of upstream's code and reason,
//     and bodies broken at random, each refused with a 4xx Status or
//     accepted, never a 5xx; etcd unchanged by every refusal and the
//     process alive after every answer;
//   - limits (limits_test.go): a connection flood beyond a low descriptor
//     limit held past etcd's WAL purge, the in-flight limits (429 with
//     Retry-After, watches taking no slot) and a stalled request body
//     (a Status and a closed connection within --request-timeout).
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
