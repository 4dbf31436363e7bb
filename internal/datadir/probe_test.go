package datadir

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
)

func TestProbeFindsTheAddressThatAnswers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dead := closedAddress(t)
	if err := Probe(context.Background(), []string{"http://" + dead, "http://" + ln.Addr().String()}); err != nil {
		t.Fatalf("Probe with one listener: %v", err)
	}
	err = Probe(context.Background(), []string{"http://" + dead})
	if err == nil {
		t.Fatal("Probe of a closed port answered nil")
	}
	nr := &NotRunningError{What: "etcd", URLs: []string{"http://" + dead}, From: "from --etcd-endpoints", DataDir: "d", Err: err}
	if !errors.Is(nr, err) || !strings.Contains(nr.Error(), "from --etcd-endpoints") || !strings.Contains(nr.Error(), "--etcd-endpoints URLS") {
		t.Fatalf("NotRunningError says %q", nr.Error())
	}
}

// closedAddress is a loopback address nothing listens on.
func closedAddress(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
