//go:build unix

package filters

import (
	"syscall"
	"testing"
)

// At start the soft limit on open files is raised to the hard limit, so
// that the connection cap derived from it is as high as the process may
// go, and etcd keeps its reserve below it.
func TestRaiseFileLimitRaisesTheSoftLimitToTheHardLimit(t *testing.T) {
	var before syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &before); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &before) })
	lowered := syscall.Rlimit{Cur: before.Max - 1, Max: before.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lowered); err != nil {
		t.Skipf("cannot lower the soft limit to test raising it: %v", err)
	}
	got, err := raiseFileLimit()
	if err != nil {
		t.Fatal(err)
	}
	var now syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &now); err != nil {
		t.Fatal(err)
	}
	if got != before.Max || now.Cur != before.Max {
		t.Errorf("after raiseFileLimit: got %d, soft limit %d; want both the hard limit %d", got, now.Cur, before.Max)
	}
}
