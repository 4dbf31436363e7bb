//go:build unix

package controlplane

import (
	"os"
	"syscall"
)

// errLocked is what tryLock returns when another process holds the lock.
var errLocked = syscall.EWOULDBLOCK

// tryLock takes an exclusive flock on f without waiting.
func tryLock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
