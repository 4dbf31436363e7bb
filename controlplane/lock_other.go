//go:build !unix

package controlplane

import (
	"errors"
	"os"
)

// errLocked is never returned here: without flock the data directory is
// not guarded, and a second minicp waits on etcd's database lock instead.
var errLocked = errors.New("locked")

func tryLock(*os.File) error { return nil }
