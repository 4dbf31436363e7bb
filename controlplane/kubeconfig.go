package controlplane

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// contextName names the cluster, user and context in the kubeconfig.
const contextName = "minicp"

// writeKubeconfig writes a kubeconfig for rc: the server, its CA when it
// speaks TLS, and the bearer token. It writes a temporary file (0600: it
// holds the token) and renames it, so a reader never sees half a file.
func writeKubeconfig(path string, rc *rest.Config) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[contextName] = &clientcmdapi.Cluster{Server: rc.Host, CertificateAuthorityData: rc.CAData}
	cfg.AuthInfos[contextName] = &clientcmdapi.AuthInfo{Token: rc.BearerToken}
	cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName, Namespace: "default"}
	cfg.CurrentContext = contextName
	tmp := path + ".tmp"
	if err := clientcmd.WriteToFile(*cfg, tmp); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	return os.Rename(tmp, path)
}

// printBanner tells the user where everything is and the one line that
// points kubectl at minicp.
func printBanner(w io.Writer, cp *ControlPlane, startup time.Duration) {
	kubeconfig := cp.KubeconfigPath()
	if abs, err := filepath.Abs(kubeconfig); err == nil {
		kubeconfig = abs
	}
	fmt.Fprintf(w, "minicp ready in %s\n", startup.Round(time.Millisecond))
	fmt.Fprintf(w, "  apiserver: %s\n", cp.URL())
	fmt.Fprintf(w, "  etcd:      %s\n", strings.Join(cp.EtcdEndpoints(), ","))
	if events := cp.EventsEtcdEndpoints(); len(events) > 0 {
		fmt.Fprintf(w, "  events:    %s\n", strings.Join(events, ","))
	}
	login := cp.LoginURL()
	fmt.Fprintf(w, "  live page: %s\n", login)
	fmt.Fprintf(w, "             (a one-time login link: it sets a cookie for this browser and opens %s)\n", pageHome(login))
	fmt.Fprintf(w, "             (for a new link at any time: go run ./cmd/minictl --data-dir %s ui)\n", cp.cfg.DataDir)
	fmt.Fprintf(w, "Point kubectl at it with:\n\n  export KUBECONFIG=%s\n\n", kubeconfig)
	fmt.Fprintln(w, "Press Ctrl-C to stop.")
}

// pageHome is where the login link leads: /ui/ on the link's own scheme,
// host and port (plain HTTP on loopback, unless --tls-only), as the cookie
// it sets is good there only.
func pageHome(login string) string {
	u, err := url.Parse(login)
	if err != nil {
		return "/ui/"
	}
	u.Path, u.RawQuery = "/ui/", ""
	return u.String()
}
