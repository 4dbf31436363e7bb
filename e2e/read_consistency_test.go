package e2e

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/controlplane"
	"minicp/e2e/framework"
)

// M3: on three members with two stopped, a quorum read
// (GET resourceVersion="") fails with a 504 Timeout once its timeout
// passes, while a read that accepts staleness (resourceVersion=0) is
// answered, as is a serializable etcd read on the surviving member; a
// linearizable one is not.
func TestWithoutQuorumAQuorumReadTimesOutAndACacheReadStillAnswers(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) { c.Etcd.Members = 3 }})
	ctx := framework.Context(t, 2*time.Minute)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"mode": "one"}}
	if _, err := s.Clientset.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cluster := s.ControlPlane.EtcdCluster()
	members := cluster.Members()
	survivor := members[2]
	for _, m := range members[:2] {
		if err := cluster.StopMember(m.Name()); err != nil {
			t.Fatalf("stopping %s: %v", m.Name(), err)
		}
	}
	t.Cleanup(func() { // if the test failed half-way: Close is quicker with a quorum
		for _, m := range members[:2] {
			if current, err := cluster.Member(m.Name()); err == nil && !current.Running() {
				if err := cluster.RestartMember(context.Background(), m.Name()); err != nil {
					t.Logf("restarting %s: %v", m.Name(), err)
				}
			}
		}
	})
	base := s.ControlPlane.URL() + "/api/v1/namespaces/default/configmaps/settings"

	code, body, took := timedGet(t, s.HTTP, http.MethodGet, base+"?timeout=2s")
	t.Logf("quorum GET without quorum: %d after %v: %s", code, took.Round(time.Millisecond), strings.TrimSpace(string(body)))
	expectTimeoutStatus(t, code, body)
	if took < 2*time.Second || took > 4*time.Second {
		t.Errorf("the quorum read failed after %v, want once its 2s timeout passed", took)
	}

	code, body, took = timedGet(t, s.HTTP, http.MethodGet, base+"?resourceVersion=0&timeout=2s")
	if code != http.StatusOK || !strings.Contains(string(body), `"mode":"one"`) {
		t.Fatalf("GET resourceVersion=0 without quorum: %d %s, want 200 with the config map", code, body)
	}
	t.Logf("GET resourceVersion=0 without quorum: 200 after %v", took.Round(time.Millisecond))

	// etcd itself, on the surviving member: serializable answers from the
	// member's own state, linearizable needs a leader.
	direct, err := clientv3.New(clientv3.Config{Endpoints: []string{survivor.ClientURL()}, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	readCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	resp, err := direct.Get(readCtx, "/registry/configmaps/default/settings", clientv3.WithSerializable())
	if err != nil || len(resp.Kvs) != 1 {
		t.Errorf("serializable read on %s: %v %v, want the key", survivor.Name(), resp, err)
	}
	quorumCtx, cancelQuorum := context.WithTimeout(ctx, 2*time.Second)
	defer cancelQuorum()
	if _, err := direct.Get(quorumCtx, "/registry/configmaps/default/settings"); err == nil {
		t.Error("a linearizable read succeeded without a quorum")
	} else {
		t.Logf("linearizable read on %s without quorum: %v (deadline: %v)", survivor.Name(), err, errors.Is(err, context.DeadlineExceeded))
	}

	// Quorum back: the quorum read answers again.
	for _, m := range members[:2] {
		if err := cluster.RestartMember(ctx, m.Name()); err != nil {
			t.Fatalf("restarting %s: %v", m.Name(), err)
		}
	}
	framework.Eventually(t, framework.StateTimeout, "quorum reads to answer again", func() bool {
		code, _, _ := timedGet(t, s.HTTP, http.MethodGet, base+"?timeout=2s")
		return code == http.StatusOK
	})
}
