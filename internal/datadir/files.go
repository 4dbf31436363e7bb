package datadir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The files minicp writes in its data directory.
const (
	// EtcdEndpointsFile lists the client URLs of the etcd minicp uses, one
	// per line, so that tools find etcd from the data directory alone.
	EtcdEndpointsFile = "etcd-endpoints"
	// EventsEtcdEndpointsFile lists the client URLs of the etcd that holds
	// events, when it is not the main one.
	EventsEtcdEndpointsFile = "etcd-events-endpoints"
	// TokenFile holds the admin bearer token (mode 0600), kept across
	// restarts so that a kubeconfig copied elsewhere keeps working.
	TokenFile = "token"
	// KubeconfigFile is the kubeconfig minicp writes: its https URL, its
	// CA and the admin token.
	KubeconfigFile = "kubeconfig"
	// EtcdDir holds the embedded etcd members' own data directories.
	EtcdDir = "etcd"
)

// Kubeconfig is the path of the kubeconfig minicp writes in dataDir.
func Kubeconfig(dataDir string) string { return filepath.Join(dataDir, KubeconfigFile) }

// Etcd is the directory under dataDir where the embedded members keep
// their data.
func Etcd(dataDir string) string { return filepath.Join(dataDir, EtcdDir) }

// WriteEtcdEndpoints writes the main etcd's client URLs to dataDir.
func WriteEtcdEndpoints(dataDir string, endpoints []string) error {
	return writeEndpoints(filepath.Join(dataDir, EtcdEndpointsFile), endpoints)
}

// WriteEventsEtcdEndpoints writes the events etcd's client URLs to dataDir.
func WriteEventsEtcdEndpoints(dataDir string, endpoints []string) error {
	return writeEndpoints(filepath.Join(dataDir, EventsEtcdEndpointsFile), endpoints)
}

// ReadEtcdEndpoints returns the etcd client URLs a minicp using dataDir
// wrote at start-up.
func ReadEtcdEndpoints(dataDir string) ([]string, error) {
	return readEndpoints(filepath.Join(dataDir, EtcdEndpointsFile))
}

// ReadEventsEtcdEndpoints returns the events etcd's client URLs a minicp
// using dataDir wrote, or an error when events share the main etcd.
func ReadEventsEtcdEndpoints(dataDir string) ([]string, error) {
	return readEndpoints(filepath.Join(dataDir, EventsEtcdEndpointsFile))
}

// writeEndpoints writes endpoints, one per line, to path; like the
// kubeconfig, through a temporary file and a rename, so that a reader
// never sees half.
func writeEndpoints(path string, endpoints []string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strings.Join(endpoints, "\n")+"\n"), 0o600); err != nil {
		return fmt.Errorf("writing the etcd endpoints file: %w", err)
	}
	return os.Rename(tmp, path)
}

// readEndpoints reads a file writeEndpoints wrote.
func readEndpoints(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var eps []string
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			eps = append(eps, line)
		}
	}
	if len(eps) == 0 {
		return nil, fmt.Errorf("%s lists no etcd endpoint", path)
	}
	return eps, nil
}
