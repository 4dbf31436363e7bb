package controlplane

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LockFile, in the data directory, is held (flock, exclusive) by the one
// minicp using that directory, and holds its process id. Two minicps on
// one directory would open the same etcd database: the second would wait
// forever on bbolt's own lock, saying nothing. With this lock it fails at
// once and names the first. The kernel drops the lock when the process
// ends, however it ends, so a crash leaves no stale lock behind.
const LockFile = "minicp.lock"

// ErrDataDirInUse matches (errors.Is) the error Start returns when another
// minicp holds the data directory's lock.
var ErrDataDirInUse = errors.New("data directory in use by another minicp")

// dataDirLock is a held LockFile; release closes it, which drops the lock.
type dataDirLock struct{ f *os.File }

// lockDataDir takes dir's lock without waiting, and writes our pid in it.
func lockDataDir(dir string) (*dataDirLock, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the data directory's lock %s: %w", path, err)
	}
	if err := tryLock(f); err != nil {
		f.Close()
		if errors.Is(err, errLocked) {
			return nil, &dataDirInUseError{dir: dir, pid: LockHolder(dir)}
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("writing our pid to %s: %w", path, err)
	}
	return &dataDirLock{f: f}, nil
}

// release drops the lock. The file stays: removing it could race with a
// minicp starting next, which would then lock a file nobody else sees.
func (l *dataDirLock) release() {
	if l != nil {
		l.f.Close()
	}
}

// LockHolder is the pid written in dir's lock file, or 0 if there is none.
// It says who took the lock last; only a failed lock says it still runs.
func LockHolder(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, LockFile))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// dataDirInUseError names the directory and the minicp that holds it.
type dataDirInUseError struct {
	dir string
	pid int // 0 if the holder has not written its pid yet
}

func (e *dataDirInUseError) Error() string {
	holder := "another minicp"
	stop := "stop it"
	if e.pid > 0 {
		holder = fmt.Sprintf("another minicp (pid %d)", e.pid)
		stop = fmt.Sprintf("stop it (Ctrl-C in its terminal, or kill %d)", e.pid)
	}
	return fmt.Sprintf("data directory %s is in use by %s: %s, or start this one on another directory with --data-dir DIR (and --port 0, --etcd-client-port 0 and --etcd-peer-port 0 if both are to run)", e.dir, holder, stop)
}

func (e *dataDirInUseError) Is(target error) bool { return target == ErrDataDirInUse }
