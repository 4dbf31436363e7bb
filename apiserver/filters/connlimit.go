package filters

import (
	"log/slog"
	"net"

	"golang.org/x/net/netutil"
)

// Every open connection holds a file descriptor, and so do etcd's WAL
// segments, snapshots, database and its own sockets, all in this one
// process. When client connections take the last descriptor, etcd's next
// open fails and etcd stops the process. So the apiserver accepts at most
// MaxConnections at once, well below the descriptor limit: further clients
// wait in the kernel's accept queue until a connection closes (idle ones
// are closed after the apiserver's idle timeout).

// The descriptors kept from clients for everything else in the process
// (etcd's files, its peers and clients, the watch cache's etcd
// connections, the log) are a quarter of the limit, and at least
// minFDReserve.
const minFDReserve = 256

// connectionCap derives the connection cap from the descriptor limit.
func connectionCap(fdLimit uint64) int {
	reserve := max(fdLimit/4, minFDReserve)
	if fdLimit <= reserve+minFDReserve {
		return minFDReserve / 2 // a tiny limit: leave most of it to etcd
	}
	return int(fdLimit - reserve)
}

// MaxConnections is configured (--max-connections) when set, or else the
// cap derived from the process's descriptor limit, raised to its hard
// limit first.
func MaxConnections(configured int, log *slog.Logger) int {
	if configured > 0 {
		return configured
	}
	limit, err := raiseFileLimit()
	if err != nil {
		log.Warn("reading the file descriptor limit; capping connections at the default", "err", err, "cap", defaultMaxConnections)
		return defaultMaxConnections
	}
	n := connectionCap(limit)
	log.Debug("connection cap", "open_files_limit", limit, "max_connections", n)
	return n
}

// defaultMaxConnections is the cap where the descriptor limit is unknown.
const defaultMaxConnections = 768

// LimitConnections lets at most n connections of ln be open at once.
func LimitConnections(ln net.Listener, n int) net.Listener { return netutil.LimitListener(ln, n) }
