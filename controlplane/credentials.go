package controlplane

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"

	"minicp/apiserver"
	"minicp/apiserver/filters"
	"minicp/internal/datadir"
)

// AdminUser is who the token in datadir.TokenFile authenticates as. The
// token is made on minicp's first start and kept across restarts; delete
// the file to get a new one.
var AdminUser = filters.UserInfo{Name: "minicp-admin", UID: "minicp-admin", Groups: []string{"minicp:admins"}}

// loadOrCreateToken returns the token in dataDir, making it on first
// start. The file is created with O_EXCL at mode 0600, so it is never
// readable by others, not even for a moment.
func loadOrCreateToken(dataDir string) (string, error) {
	path := filepath.Join(dataDir, datadir.TokenFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		token := string(bytes.TrimSpace(b))
		if token == "" {
			return "", fmt.Errorf("the token file %s is empty: delete it and minicp makes a new token", path)
		}
		if err := os.Chmod(path, 0o600); err != nil {
			return "", fmt.Errorf("making the token file private: %w", err)
		}
		return token, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("reading the token file: %w", err)
	}
	token := apiserver.RandomToken()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("creating the token file: %w", err)
	}
	_, err = f.WriteString(token + "\n")
	if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
		return "", fmt.Errorf("writing the token file: %w", err)
	}
	return token, nil
}

// credentialsInPlace is the readiness check of the files clients need:
// /readyz fails until the kubeconfig and the token file are written, so a
// script that waits for /readyz finds them.
func (cp *ControlPlane) credentialsInPlace() error {
	if !cp.kubeconfigWritten.Load() {
		return errors.New("the kubeconfig is not written yet")
	}
	for _, name := range []string{datadir.KubeconfigFile, datadir.TokenFile} {
		if _, err := os.Stat(filepath.Join(cp.cfg.DataDir, name)); err != nil {
			return fmt.Errorf("%s is missing from the data directory: %w", name, err)
		}
	}
	return nil
}

// servingConfig is the apiserver's configuration with the admin token and
// a serving certificate: the one given (whose root, when the file ends
// with it, the kubeconfig carries), or minicp's own (pki.go).
func (cp *ControlPlane) servingConfig() (apiserver.Config, error) {
	c := cp.cfg.APIServer
	c.Tokens = map[string]filters.UserInfo{cp.token: AdminUser}
	if c.TLSCertFile != "" {
		root, err := givenCertRoot(c.TLSCertFile)
		cp.caPEM = root
		return c, err
	}
	p, err := ensurePKI(filepath.Join(cp.cfg.DataDir, PKIDir), c.BindAddress, time.Now())
	if err != nil {
		return c, fmt.Errorf("making the serving certificate: %w", err)
	}
	c.TLSCertFile, c.TLSPrivateKeyFile, cp.caPEM = p.certFile, p.keyFile, p.caPEM
	return c, nil
}

// clientConfig reaches the apiserver as the admin user, for minicp's own
// clients (controllers, simulated nodes): over plain HTTP on loopback,
// which saves them TLS's cost, else as the kubeconfig does.
func (cp *ControlPlane) clientConfig() *rest.Config {
	if plain := cp.api.PlainURL(); plain != "" {
		return &rest.Config{Host: plain, BearerToken: cp.token}
	}
	return cp.RESTConfig()
}

// RESTConfig is a client configuration for the running apiserver as the
// kubeconfig has it: its https URL, the CA, the admin token. kubectl and
// client-go send a kubeconfig's token only over https.
func (cp *ControlPlane) RESTConfig() *rest.Config {
	return &rest.Config{Host: cp.api.URL(), BearerToken: cp.token, TLSClientConfig: rest.TLSClientConfig{CAData: cp.caPEM}}
}

// Token is the admin bearer token (the content of datadir.TokenFile).
func (cp *ControlPlane) Token() string { return cp.token }

// LoginURL returns a new one-time URL that logs a browser into the live
// page.
func (cp *ControlPlane) LoginURL() string { return cp.api.NewLoginURL(AdminUser) }

// withQPS sets rc's client-side rate limit (-1: none) and returns it.
func withQPS(rc *rest.Config, qps float32) *rest.Config {
	rc.QPS = qps
	return rc
}

// PlainURL is the apiserver's plain-HTTP URL on loopback, "" when it
// serves TLS only.
func (cp *ControlPlane) PlainURL() string { return cp.api.PlainURL() }
