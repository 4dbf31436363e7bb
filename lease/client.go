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
// Over plain HTTP, which cannot multiplex, it keeps up to conns
// connections open for reuse, so that conns concurrent requests do not
// open a new connection each; closeIdle closes them, for a clean stop.
// Over TLS, client-go's HTTP/2 transport multiplexes on one connection.
func NewClientset(rc *rest.Config, conns int) (cs *kubernetes.Clientset, closeIdle func(), err error) {
	cfg := rest.CopyConfig(rc)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.QPS = -1
	closeIdle = func() {}
	if cfg.Transport == nil && cfg.WrapTransport == nil && !rest.IsConfigTransportTLS(*cfg) {
		t := &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        conns,
			MaxIdleConnsPerHost: conns,
			IdleConnTimeout:     90 * time.Second,
		}
		cfg.Transport = t
		closeIdle = t.CloseIdleConnections
	}
	cs, err = kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	return cs, closeIdle, nil
}
