package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/controlplane"
	"minicp/e2e/framework"
)

// M12: every Node Lease key is bound to an etcd lease of
// its own, granted leaseDurationSeconds, and lease ls shows its countdown.
func TestLeaseLsShowsOneEtcdLeasePerNodeLease(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) { c.Nodes.Simulated = 2 }})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := runOK(t, ctx, "--data-dir", s.DataDir, "lease", "ls", "--prefix", "/registry/leases/kube-node-lease/")
	wantLines(t, out, "# 2 etcd lease(s)", "ID                GRANTED  REMAINING  KEYS")
	row := regexp.MustCompile(`(?m)^[0-9a-f]{16}      40s   +\d+s  /registry/leases/kube-node-lease/node-[01]$`)
	if got := len(row.FindAllString(out, -1)); got != 2 {
		t.Errorf("got %d rows of a 40 s lease bound to one node's key, want 2:\n%s", got, out)
	}

	out = runOK(t, ctx, "--data-dir", s.DataDir, "etcd", "get", "/registry/leases/kube-node-lease/node-0")
	if !regexp.MustCompile(`lease:           [0-9a-f]+ \(granted 40s, \d+s left; see minictl lease ls\)`).MatchString(out) {
		t.Errorf("etcd get of a bound key does not show its lease and TTL:\n%s", out)
	}
}

// M13: move-leader hands leadership to the named member,
// in a new Raft term, and status names the new leader.
func TestMoveLeaderMakesTheNamedMemberLeader(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) { c.Etcd.Members = 3 }})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	target := ""
	for _, m := range s.ControlPlane.EtcdCluster().Status().Members {
		if !m.IsLeader {
			target = m.Name
		}
	}
	out := runOK(t, ctx, "--data-dir", s.DataDir, "etcd", "move-leader", target)
	if !regexp.MustCompile(`^leader moved from minicp-etcd-\d \([0-9a-f]+\) to ` + target + ` \([0-9a-f]+\); raft term \d+ -> \d+\n$`).MatchString(out) {
		t.Errorf("move-leader output: %q", out)
	}
	if got := s.ControlPlane.EtcdCluster().Status().Leader; got != target {
		t.Errorf("leader: got %s, want %s", got, target)
	}
	status := runOK(t, ctx, "--data-dir", s.DataDir, "etcd", "status")
	if !regexp.MustCompile(target + ` \([0-9a-f]+\) leader`).MatchString(status) {
		t.Errorf("status does not name %s leader:\n%s", target, status)
	}
	if err := run(ctx, []string{"--data-dir", s.DataDir, "etcd", "move-leader", "no-such-member"}, &strings.Builder{}); err == nil ||
		!strings.Contains(err.Error(), "the members are minicp-etcd-0, minicp-etcd-1, minicp-etcd-2") {
		t.Errorf("move-leader to an unknown member: got %v, want an error listing the members", err)
	}
}

func TestEtcdGetShowsJSONStorageAsJSON(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) { c.StorageMediaType = controlplane.MediaTypeJSON }})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "demo"}, Data: map[string]string{"color": "blue"}}
	if _, err := s.Clientset.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out := runOK(t, ctx, "--data-dir", s.DataDir, "etcd", "get", "/registry/configmaps/default/demo")
	wantLines(t, out, "JSON (--storage-media-type=application/json)", "stored JSON:\n{\n  \"kind\": \"ConfigMap\"", `"color": "blue"`)
	if strings.Contains(out, "envelope:") {
		t.Errorf("a JSON value is shown with a protobuf envelope:\n%s", out)
	}
}
