//go:build !unix

package filters

import "errors"

// raiseFileLimit has no descriptor limit to read outside Unix.
func raiseFileLimit() (uint64, error) { return 0, errors.New("no RLIMIT_NOFILE on this system") }
