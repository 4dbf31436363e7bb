// Package testsupport holds the helpers minicp's tests share: a buffer safe
// for concurrent writers, polling with a deadline, one HTTP request sent
// and read whole (http.go), and decoding the CRDs
// tests write in YAML. Tests wait for
// conditions by polling them, never by sleeping and hoping. (A test etcd
// is package testetcd's.) It depends on no minicp package, so that every
// package's tests may use it.
package testsupport

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// SyncBuffer is a bytes.Buffer safe for concurrent writers (a logger, a
// child process) and readers (the test).
type SyncBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// PollInterval is how often Eventually checks its condition.
const PollInterval = 10 * time.Millisecond

// Eventually checks cond every PollInterval until it holds, and fails the
// test if it still does not after timeout; what names the condition in
// the failure.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(PollInterval)
	}
}
