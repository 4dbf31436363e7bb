//go:build linux

package robustness

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// M4: a write acknowledged with resourceVersion N is in etcd's WAL, fsynced,
// before the answer leaves: killing minicp with SIGKILL at any moment loses
// none, and resourceVersions, etcd's mod revisions, never go back.
func TestAcknowledgedWritesSurviveSIGKILL(t *testing.T) {
	rounds := pick(10, 40)
	c := startChild(t, childOptions{})
	cs := c.clientset()
	createNamespace(t, cs)
	w := newWriters(pick(4, 8), pick(16, 32))

	var lost, applied, dropped, violations int
	for round := 1; round <= rounds; round++ {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { // the writers of this round, until cancel
			w.run(ctx, cs)
			close(done)
		}()
		// The random moment: somewhere in the round's writes.
		wait(randomDuration(pick(300*time.Millisecond, time.Second), pick(1500*time.Millisecond, 5*time.Second)))
		c.kill()
		cancel()
		<-done

		c.start()
		cs = c.clientset()
		checkCtx, cancelCheck := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := w.check(checkCtx, cs)
		cancelCheck()
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		for _, v := range res.violations {
			t.Errorf("round %d: %s", round, v)
		}
		lost, applied, dropped, violations = lost+res.lost, applied+res.applied, dropped+res.dropped, violations+len(res.violations)
	}
	acked := w.acked.Load()
	t.Logf("robustness: durability rounds=%d acknowledged=%d lost=%d violations=%d unanswered=%d (found applied %d, not applied %d)",
		rounds, acked, lost, violations, w.unknown.Load(), applied, dropped)
	if acked < int64(rounds) {
		t.Errorf("only %d writes acknowledged in %d rounds: the test did not exercise durability", acked, rounds)
	}
}

// createNamespace creates the namespace every robustness test writes in.
func createNamespace(t testing.TB, cs kubernetes.Interface) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNamespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", testNamespace, err)
	}
}

// randomDuration is uniform in [lo, hi).
func randomDuration(lo, hi time.Duration) time.Duration {
	return lo + rand.N(hi-lo)
}

// wait lets the chaos schedule run for d. It is not synchronisation: what
// the tests check never depends on how long it lasts.
func wait(d time.Duration) { <-time.After(d) }
