package lease

import (
	"net"
	"net/http"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// NewClientset returns the one clientset all simulated nodes share, as
// kubelets would talk: protobuf, and no client-side rate limit (each real
// kubelet has its own; here one client speaks for thousands of nodes).
// It keeps up to conns connections open for reuse (minicp speaks HTTP/1.1,
// which cannot multiplex), so that conns concurrent requests do not open a
// new connection each; closeIdle closes them, for a clean stop. Over TLS
// the transport carries the configuration's CA and client certificates.
func NewClientset(rc *rest.Config, conns int) (cs *kubernetes.Clientset, closeIdle func(), err error) {
	cfg := rest.CopyConfig(rc)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.QPS = -1
	closeIdle = func() {}
	if cfg.Transport == nil && cfg.WrapTransport == nil {
		tlsConfig, err := rest.TLSConfigFor(cfg)
		if err != nil {
			return nil, nil, err
		}
		t := &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSClientConfig:     tlsConfig,
			MaxIdleConns:        conns,
			MaxIdleConnsPerHost: conns,
			IdleConnTimeout:     90 * time.Second,
		}
		cfg.Transport = t
		cfg.TLSClientConfig = rest.TLSClientConfig{} // now the transport's
		closeIdle = t.CloseIdleConnections
	}
	cs, err = kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	return cs, closeIdle, nil
}
