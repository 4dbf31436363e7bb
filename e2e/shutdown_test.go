package e2e

import (
	"crypto/tls"
	"net/url"
	"testing"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"minicp/controlplane"
	"minicp/e2e/framework"
)

// A stack whose clients hold watches over TLS stops at once and cleanly:
// the informer's watch ends with the apiserver, and a TLS connection that
// never carried a request (what client-go's transport keeps when a request
// is cancelled while it dials, what a browser opens in advance) is closed
// rather than waited for. Before, net/http counted such a connection as
// busy for 5 seconds, all the time a stop has, and Close failed with
// "requests still running at shutdown".
func TestStopIsPromptWithAnInformerAndAnUnusedConnectionOverTLS(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	factory := informers.NewSharedInformerFactoryWithOptions(s.Clientset, 0, informers.WithNamespace("default"))
	informer := factory.Core().V1().ConfigMaps().Informer()
	stop := make(chan struct{})
	factory.Start(stop) // the informer's goroutines end when stop is closed
	defer func() {
		close(stop)
		factory.Shutdown() // waits for them
	}()
	if !cache.WaitForCacheSync(framework.Context(t, framework.StateTimeout).Done(), informer.HasSynced) {
		t.Fatal("the informer did not sync")
	}

	tlsConfig, err := rest.TLSConfigFor(s.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig.NextProtos = []string{"h2", "http/1.1"} // what client-go's transport offers
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	unused, err := tls.Dial("tcp", u.Host, tlsConfig) // handshake done, no request
	if err != nil {
		t.Fatalf("TLS handshake with %s: %v", u.Host, err)
	}
	defer unused.Close()
	if p := unused.ConnectionState().NegotiatedProtocol; p != "http/1.1" {
		t.Errorf("negotiated protocol: got %q, want http/1.1 (listen.go: one request stream per connection)", p)
	}

	start := time.Now()
	if err := s.ControlPlane.Close(); err != nil {
		t.Errorf("stopping minicp: got %v, want nil", err)
	}
	took := time.Since(start)
	if took >= controlplane.ShutdownTimeout {
		t.Errorf("stopping minicp took %v, want well under ShutdownTimeout (%v)", took.Round(time.Millisecond), controlplane.ShutdownTimeout)
	}
	t.Logf("stopped in %v", took.Round(time.Millisecond))
	if err := unused.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := unused.Read(make([]byte, 1)); err == nil {
		t.Error("the unused connection still answers after the stop, want it closed")
	}
}
