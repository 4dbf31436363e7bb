package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/controlplane"
	"minicp/e2e/framework"
	"minicp/internal/testsupport"
)

// M11, M14: kubelet-sim registers its nodes through the
// kubeconfig, renews their leases and reports what it did.
func TestKubeletSimRegistersNodesAndReportsRenewals(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	// It runs until its steady state (registration, then one renewal
	// interval, then a whole window) has had a few windows: five report
	// lines with every node registered, 2.5 s after registration.
	out := runUntil(t, "five reports with every node registered", func(out string) bool {
		return strings.Count(out, "registered 5/5") >= 5
	}, "--kubeconfig", s.Kubeconfig, "--data-dir", s.DataDir, "--nodes", "5", "--lease-duration", "4s", "--report-interval", "500ms")
	for _, want := range []string{"kubelet-sim: 5 nodes (sim-node-0..sim-node-4)", "registered 5/5", "summary: ", "steady state: ", "etcd in the steady state: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not contain %q:\n%s", want, out)
		}
	}
	nodes, err := s.Clientset.CoreV1().Nodes().List(framework.Context(t, 10*time.Second), metav1.ListOptions{})
	if err != nil || len(nodes.Items) != 5 {
		t.Fatalf("nodes: got %d (%v), want 5", len(nodes.Items), err)
	}
}

// M11 over TLS only: with --tls-only every client speaks TLS, minicp's
// in-process nodes too; kubelet-sim, through the kubeconfig's CA and
// token, registers its nodes and renews their leases with no failure.
func TestKubeletSimHeartbeatsOverTLSOnly(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) {
		c.APIServer.TLSOnly = true
		c.Nodes.Simulated = 2
		c.Nodes.LifecycleController = true
	}})
	if !strings.HasPrefix(s.URL, "https://") || s.ControlPlane.PlainURL() != "" {
		t.Fatalf("got URL %s and plain URL %q, want https only", s.URL, s.ControlPlane.PlainURL())
	}
	out := runUntilRenewed(t, s, "--kubeconfig", s.Kubeconfig, "--data-dir", s.DataDir, "--nodes", "5", "--lease-duration", "4s",
		"--report-interval", "500ms")
	for _, want := range []string{"against " + s.URL, "registered 5/5", "lapses 0", "failures 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not contain %q:\n%s", want, out)
		}
	}
	nodes, err := s.Clientset.CoreV1().Nodes().List(framework.Context(t, 10*time.Second), metav1.ListOptions{})
	if err != nil || len(nodes.Items) != 7 {
		t.Fatalf("nodes: got %d (%v), want 7 (2 in-process, 5 of kubelet-sim)", len(nodes.Items), err)
	}
}

// --plain-http keeps the kubeconfig's token and talks plain HTTP to the
// loopback port, which minicp answers beside TLS: the benchmark of what
// TLS costs a heartbeat (cmd/kubelet-sim/bench.sh, MODES=plain).
func TestKubeletSimPlainHTTPKeepsTheToken(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	out := runUntilRenewed(t, s, "--kubeconfig", s.Kubeconfig, "--data-dir", s.DataDir, "--nodes", "3", "--lease-duration", "4s",
		"--report-interval", "500ms", "--plain-http")
	for _, want := range []string{"against " + s.ControlPlane.PlainURL(), "registered 3/3", "failures 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not contain %q:\n%s", want, out)
		}
	}
}

// runUntilRenewed runs kubelet-sim with args against s until the Lease of
// sim-node-0 has been renewed seconds after its creation (renewals every
// second with a 4 s lease; creationTimestamp has whole seconds).
func runUntilRenewed(t *testing.T, s *framework.Stack, args ...string) string {
	t.Helper()
	ctx := framework.Context(t, 90*time.Second)
	return runUntil(t, "sim-node-0's lease to be renewed", func(string) bool {
		l, err := s.Clientset.CoordinationV1().Leases("kube-node-lease").Get(ctx, "sim-node-0", metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime != nil && l.Spec.RenewTime.Sub(l.CreationTimestamp.Time) >= 2*time.Second
	}, args...)
}

// runUntil runs kubelet-sim with args until cond, polled with what it
// has printed so far, holds; then it stops kubelet-sim (as Ctrl-C does)
// and returns everything it printed, its summary included.
func runUntil(t *testing.T, what string, cond func(out string) bool, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out testsupport.SyncBuffer
	done := make(chan error, 1) // kubelet-sim's result, once ctx ends
	go func() { done <- run(ctx, args, &out) }()
	framework.Eventually(t, 60*time.Second, what, func() bool {
		select {
		case err := <-done:
			t.Fatalf("kubelet-sim ended early: %v\n%s", err, out.String())
		default:
		}
		return cond(out.String())
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("kubelet-sim: %v\n%s", err, out.String())
	}
	return out.String()
}

// The baseline writes the same renewals straight to etcd, under its own
// prefix, one transaction each.
func TestKubeletSimEtcdDirectWritesOneKeyPerNode(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	var out bytes.Buffer
	args := []string{"--etcd-direct", "--etcd-endpoints", strings.Join(s.ControlPlane.EtcdEndpoints(), ","),
		"--nodes", "20", "--lease-duration", "4s", "--report-interval", "500ms", "--duration", "3s"}
	if err := run(context.Background(), args, &out); err != nil {
		t.Fatalf("kubelet-sim --etcd-direct: %v\n%s", err, out.String())
	}
	resp, err := s.Etcd.Get(framework.Context(t, 10*time.Second), directPrefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 20 {
		t.Fatalf("keys under %s: got %d, want 20", directPrefix, len(resp.Kvs))
	}
	if v := resp.Kvs[0].Version; v < 2 {
		t.Errorf("key %s written %d time(s) in 3 s, want renewals every second", resp.Kvs[0].Key, v)
	}
	if !strings.Contains(out.String(), "registered 20/20") || !strings.Contains(out.String(), "lapses 0") {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestKubeletSimRefusesBadFlagsSayingWhichOne(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--nodes", "-1"}, "--nodes must not be negative"},
		{[]string{"--node-prefix", "Not_A_Name"}, "--node-prefix"},
		{[]string{"--lease-duration", "1500ms"}, "--lease-duration must be a whole number of seconds"},
		{[]string{"--etcd-direct", "--data-dir", t.TempDir()}, "--etcd-direct needs etcd"},
		{[]string{"--kubeconfig", "/nonexistent/kubeconfig"}, "start minicp first"},
	}
	for _, tc := range cases {
		var out bytes.Buffer
		err := run(context.Background(), tc.args, &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("kubelet-sim %v: got %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

// -h and --help print the help and run nothing: with the apiserver
// unreachable, a run would fail.
func TestKubeletSimHelpRunsNothing(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"--nodes", "5", "-h"}, {"--help", "--etcd-direct", "--etcd-endpoints", "http://127.0.0.1:1"}} {
		var out bytes.Buffer
		if err := run(context.Background(), append(args, "--kubeconfig", "/nonexistent/kubeconfig"), &out); err != nil {
			t.Errorf("kubelet-sim %v: got %v, want help and no error", args, err)
		}
		if !strings.Contains(out.String(), "Usage:\n  kubelet-sim [flags]") || !strings.Contains(out.String(), "--lease-duration") {
			t.Errorf("kubelet-sim %v: output is not the help:\n%s", args, out.String())
		}
	}
}

// With minicp stopped, kubelet-sim says so at once and names the fix.
func TestKubeletSimSaysNothingAnswersWithinTwoSeconds(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	dir, kubeconfig := s.DataDir, s.Kubeconfig
	s.ControlPlane.Close()
	start := time.Now()
	err := run(context.Background(), []string{"--data-dir", dir, "--kubeconfig", kubeconfig, "--nodes", "1"}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "is minicp running on data directory "+dir) {
		t.Fatalf("got %v, want it to ask whether minicp is running", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("took %s to say nothing answers, want under 2s", took)
	}
}
