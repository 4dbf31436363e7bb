package embedetcd

import (
	"errors"
	"fmt"
	"syscall"
)

// ErrPortInUse matches (with errors.Is) the error Start returns when a
// fixed client or peer port is taken by another process.
var ErrPortInUse = errors.New("etcd port already in use")

// portInUseError names the port, its role and the flag that changes it.
type portInUseError struct {
	role string // "client" or "peer"
	port int
	err  error // the listen error
}

func (e *portInUseError) Error() string {
	return fmt.Sprintf("etcd %s port %d is already in use: pass --etcd-%s-port=0 for a free port or stop the other process", e.role, e.port, e.role)
}

func (e *portInUseError) Unwrap() error { return e.err }

func (e *portInUseError) Is(target error) bool { return target == ErrPortInUse }

func isAddrInUse(err error) bool { return errors.Is(err, syscall.EADDRINUSE) }
