package apiserver

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"minicp/internal/testsupport"
)

// A connection on which no request has arrived does not hold Shutdown:
// net/http would count it as busy for 5 seconds, longer than a stop may
// take. A client-go transport leaves such connections behind when a
// request is cancelled while its connection is being dialled.
func TestShutdownClosesConnectionsThatCarryNoRequest(t *testing.T) {
	store := newFakeStore()
	cfg := NewConfig()
	cfg.Port = 0
	cfg.AnonymousAuth = true
	s, err := New(cfg, testResources, store, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := s.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.CoreV1().Pods("").Watch(testContext(t), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	unused, err := net.Dial("tcp", strings.TrimPrefix(s.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer unused.Close()
	testsupport.Eventually(t, 5*time.Second, "the watch and the unused connection to be open", func() bool {
		s.conns.mu.Lock()
		defer s.conns.mu.Unlock()
		return s.openWatches.Load() == 1 && len(s.conns.unused) == 1
	})

	// Well below net/http's 5 seconds: before the unused connection was
	// closed, Shutdown ran out of this deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: got %v, want nil", err)
	}
	if err := unused.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := unused.Read(make([]byte, 1)); !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !isConnReset(err) {
		t.Errorf("reading the unused connection after Shutdown: got %v, want it closed (EOF)", err)
	}
}

// isConnReset reports whether err is a reset by the peer.
func isConnReset(err error) bool {
	return err != nil && !errors.Is(err, os.ErrDeadlineExceeded) && strings.Contains(err.Error(), "connection reset")
}
