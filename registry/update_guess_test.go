package registry

import (
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
)

// staleGuess returns the state of key at an earlier revision, marked as a
// guess: what a serializable read from a lagging member returns.
func staleGuess(t *testing.T, s *Store, client *clientv3.Client, key string, rev int64) *storedState {
	t.Helper()
	resp, err := client.Get(testContext(t), key, clientv3.WithRev(rev))
	if err != nil {
		t.Fatal(err)
	}
	state, err := s.stateFrom(podsResource(t), resp.Kvs)
	if err != nil {
		t.Fatal(err)
	}
	state.guessed = true
	return state
}

// Update guesses the current revision with a serializable read; a round
// that would end without a transaction on a stale guess (409, or nothing
// to write) is run again on a quorum read instead of being answered.
func TestAnUpdateDecidedOnAStaleGuessIsDecidedAgainOnAQuorumRead(t *testing.T) {
	s, client := newTestStore(t, Options{})
	ctx := testContext(t)
	first := createPod(t, s, newPod("web"))
	second, _, err := s.Update(ctx, podsResource(t), "default", "web", UpdateOptions{}, func(cur runtime.Object) (runtime.Object, error) {
		p := cur.(*corev1.Pod)
		p.Labels["app"] = "api"
		return p, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	current := second.(*corev1.Pod)
	key := "/registry/pods/default/web"

	cases := []struct {
		name      string
		tryUpdate UpdateFunc
	}{
		// The client's resourceVersion is newer than the guess: not a 409.
		{"a resourceVersion newer than the guess", func(runtime.Object) (runtime.Object, error) {
			p := current.DeepCopy()
			p.Labels["app"] = "db"
			return p, nil
		}},
		// Identical to the guess but not to the current object: not a no-op.
		{"an object identical to the stale guess", func(runtime.Object) (runtime.Object, error) {
			p := first.DeepCopy()
			p.ResourceVersion = ""
			return p, nil
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			guess := staleGuess(t, s, client, key, rvOf(t, first))
			out, _, fresh, err := s.tryUpdateOnce(ctx, podsResource(t), key, "default", "web", UpdateOptions{}, tc.tryUpdate, guess)
			if err != nil || out != nil || fresh == nil {
				t.Fatalf("round on a stale guess: got out %v, fresh %v, err %v; want a fresh state to run again on", out, fresh, err)
			}
			if fresh.guessed || fresh.rev != rvOf(t, current) {
				t.Errorf("fresh state: guessed %v at revision %d, want a quorum read at %d", fresh.guessed, fresh.rev, rvOf(t, current))
			}
		})
	}

	// On a quorum state the same stale resourceVersion is a real 409.
	_, _, err = s.Update(ctx, podsResource(t), "default", "web", UpdateOptions{}, func(runtime.Object) (runtime.Object, error) {
		return first.DeepCopy(), nil
	})
	if !apierrors.IsConflict(err) {
		t.Errorf("update with a stale resourceVersion: got %v, want 409 Conflict", err)
	}
}
