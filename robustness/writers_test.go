//go:build linux

package robustness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// testNamespace holds every object the suite writes.
const testNamespace = "robustness"

// valueKey is the ConfigMap data key each write sets to a value unique in
// the whole run, "w<writer>-<n>", so a stored object names the write that
// produced it.
const valueKey = "v"

// keyState is what a writer knows about one ConfigMap: the state of its last
// acknowledged write, and the write it sent without an answer, if any.
type keyState struct {
	exists bool
	value  string
	rv     int64
	// unknown is the write whose outcome is unknown (the connection broke,
	// the server was killed): etcd may or may not hold it. The key is not
	// written again until a check after restart settles it.
	unknown *write
}

// write is one create, update or delete a writer sent.
type write struct {
	del   bool
	value string
}

// writers is a pool of goroutines, each owning its own keys, that create,
// update (with the resourceVersion of the last acknowledged write, so no
// update is blind) and delete ConfigMaps, and record every acknowledged
// write.
type writers struct {
	n, keysEach int
	// mu guards keys and maxRV; each writer goroutine holds it only to
	// record, and checks run while no writer runs.
	mu    sync.Mutex
	keys  map[string]*keyState
	maxRV int64 // the highest resourceVersion any answer carried

	acked   atomic.Int64 // acknowledged writes, all rounds
	unknown atomic.Int64 // writes whose outcome was unknown, all rounds
}

func newWriters(n, keysEach int) *writers {
	w := &writers{n: n, keysEach: keysEach, keys: map[string]*keyState{}}
	for i := range n {
		for k := range keysEach {
			w.keys[keyName(i, k)] = &keyState{}
		}
	}
	return w
}

func keyName(writer, k int) string { return fmt.Sprintf("w%d-k%d", writer, k) }

// run writes with every writer until ctx ends, then returns.
func (w *writers) run(ctx context.Context, cs kubernetes.Interface) {
	var wg sync.WaitGroup
	for i := range w.n {
		wg.Add(1)
		// One writer: sequential writes to its own keys until ctx ends.
		go func() {
			defer wg.Done()
			w.writeLoop(ctx, cs, i)
		}()
	}
	wg.Wait()
}

func (w *writers) writeLoop(ctx context.Context, cs kubernetes.Interface, i int) {
	api := cs.CoreV1().ConfigMaps(testNamespace)
	for seq := 0; ctx.Err() == nil; seq++ {
		name := keyName(i, rand.IntN(w.keysEach))
		w.mu.Lock()
		st := *w.keys[name]
		w.mu.Unlock()
		if st.unknown != nil {
			continue
		}
		op := write{value: fmt.Sprintf("w%d-%d", i, seq)}
		var (
			cm  *corev1.ConfigMap
			err error
		)
		switch {
		case !st.exists:
			cm, err = api.Create(ctx, configMap(name, op.value, ""), metav1.CreateOptions{})
		case rand.IntN(5) == 0:
			op.del = true
			rv := strconv.FormatInt(st.rv, 10)
			err = api.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
		default:
			cm, err = api.Update(ctx, configMap(name, op.value, strconv.FormatInt(st.rv, 10)), metav1.UpdateOptions{})
		}
		if !w.record(name, op, cm, err) {
			// The server is likely gone: do not spin while it is.
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}

// record notes the answer to op on name: acknowledged, or an unknown
// outcome.
// It reports whether the write was acknowledged.
func (w *writers) record(name string, op write, cm *corev1.ConfigMap, err error) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.keys[name]
	switch {
	case err == nil && op.del:
		*st = keyState{}
		w.acked.Add(1)
	case err == nil:
		rv, _ := strconv.ParseInt(cm.ResourceVersion, 10, 64)
		*st = keyState{exists: true, value: op.value, rv: rv}
		w.maxRV = max(w.maxRV, rv)
		w.acked.Add(1)
	default:
		// Even a 409 or a 5xx may follow an attempt that etcd applied
		// (client-go retries on Retry-After), so every error leaves the
		// outcome unknown until the next check reads it back.
		st.unknown = &op
		w.unknown.Add(1)
	}
	return err == nil
}

func configMap(name, value, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace, ResourceVersion: rv},
		Data:       map[string]string{valueKey: value},
	}
}

// checkResult is what one check after a restart found.
type checkResult struct {
	// violations describe every acknowledged write missing or changed,
	// every resourceVersion that went back, every object nobody wrote.
	violations []string
	// lost counts keys whose last acknowledged write is not there.
	lost int
	// applied and dropped count unknown outcomes found done and not done.
	applied, dropped int
}

// check lists the ConfigMaps and compares them with what the writers know:
// each key holds its last acknowledged write (same value, same
// resourceVersion), or the write sent without an answer; no object's
// resourceVersion is below its last acknowledged one, and the list's is
// not below any resourceVersion an earlier answer carried. It then takes
// what it read as the writers' new knowledge. No writer may run meanwhile.
func (w *writers) check(ctx context.Context, cs kubernetes.Interface) (checkResult, error) {
	list, err := cs.CoreV1().ConfigMaps(testNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return checkResult{}, fmt.Errorf("listing after restart: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var res checkResult
	listRV, _ := strconv.ParseInt(list.ResourceVersion, 10, 64)
	if listRV < w.maxRV {
		res.violations = append(res.violations, fmt.Sprintf("list resourceVersion %d went back: an earlier answer carried %d", listRV, w.maxRV))
	}
	stored := map[string]corev1.ConfigMap{}
	for _, cm := range list.Items {
		stored[cm.Name] = cm
	}
	for name, st := range w.keys {
		cm, ok := stored[name]
		delete(stored, name)
		rv, _ := strconv.ParseInt(cm.ResourceVersion, 10, 64)
		got := keyState{exists: ok, value: cm.Data[valueKey], rv: rv}
		switch {
		case got == keyState{exists: st.exists, value: st.value, rv: st.rv}:
			if st.unknown != nil {
				res.dropped++
			}
		case st.unknown != nil && ok != st.unknown.del && (!ok || (got.value == st.unknown.value && rv > st.rv)):
			res.applied++
		default:
			res.lost++
			res.violations = append(res.violations, fmt.Sprintf("%s: acknowledged %s, found %s", name, describe(*st), describe(got)))
		}
		if ok && st.exists && rv < st.rv {
			res.violations = append(res.violations, fmt.Sprintf("%s: resourceVersion went back from %d to %d", name, st.rv, rv))
		}
		*st = got
		w.maxRV = max(w.maxRV, rv)
	}
	for name := range stored {
		res.violations = append(res.violations, fmt.Sprintf("%s: stored, but no writer wrote it", name))
	}
	w.maxRV = max(w.maxRV, listRV)
	return res, nil
}

func describe(st keyState) string {
	s := "absent"
	if st.exists {
		s = fmt.Sprintf("%s at resourceVersion %d", st.value, st.rv)
	}
	if st.unknown != nil {
		s += fmt.Sprintf(" (unanswered: %+v)", *st.unknown)
	}
	return s
}
