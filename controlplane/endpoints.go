package controlplane

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// EtcdEndpointsFile, in the data directory, lists the client URLs of the
// etcd minicp uses, one per line, so that tools such as minictl find etcd
// from --data-dir alone.
const EtcdEndpointsFile = "etcd-endpoints"

// writeEtcdEndpoints writes the endpoints file; like the kubeconfig, it is
// written to a temporary file and renamed, so a reader never sees half.
func writeEtcdEndpoints(dataDir string, endpoints []string) error {
	return writeEndpointsFile(filepath.Join(dataDir, EtcdEndpointsFile), endpoints)
}

// writeEndpointsFile writes endpoints, one per line, to path.
func writeEndpointsFile(path string, endpoints []string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strings.Join(endpoints, "\n")+"\n"), 0o600); err != nil {
		return fmt.Errorf("writing the etcd endpoints file: %w", err)
	}
	return os.Rename(tmp, path)
}

// ReadEtcdEndpoints returns the etcd client URLs a minicp using dataDir
// wrote at start-up.
func ReadEtcdEndpoints(dataDir string) ([]string, error) {
	return readEndpointsFile(filepath.Join(dataDir, EtcdEndpointsFile))
}

// readEndpointsFile reads a file writeEndpointsFile wrote.
func readEndpointsFile(path string) ([]string, error) {
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
