//go:build linux

package robustness

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
)

// truthPrefix is where etcd keeps the test namespace's ConfigMaps.
const truthPrefix = "/registry/configmaps/" + testNamespace + "/"

// objState is one version of a ConfigMap: its name, the mod revision that
// wrote it (its resourceVersion) and its value.
type objState struct {
	name  string
	rv    int64
	value string
}

// truthEvent is one change etcd made under truthPrefix.
type truthEvent struct {
	objState       // for a delete: rv is the deletion's revision, value the last value
	del      bool  // a delete
	created  bool  // a put that created the key (ADDED, not MODIFIED)
	prevRV   int64 // the version before, 0 for a create
}

// truth records etcd's own history of the test namespace's ConfigMaps,
// read from etcd directly with a watch: etcd's revisions are what every
// watcher is compared with. It follows one run of minicp at a time: follow
// starts reading after a start, pause stops before a kill.
type truth struct {
	// mu guards everything below; the follow goroutine appends, checks read.
	mu       sync.Mutex
	baseRev  int64               // the state at baseRev is base
	base     map[string]objState // by name
	events   []truthEvent        // every change after baseRev, in revision order
	current  map[string]objState // the state after the last event
	seen     int64               // every change up to seen is in events
	lostFrom int64               // if not 0: history after it was compacted before it was read

	// cancel stops the follow goroutine, which closes done when it returns.
	cancel context.CancelFunc
	done   chan struct{}
	client *clientv3.Client
}

// newTruth reads the current state under truthPrefix as the base.
func newTruth(ctx context.Context, endpoints []string) (*truth, error) {
	cli, err := newEtcdClient(endpoints)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	resp, err := cli.Get(ctx, truthPrefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("reading etcd's state: %w", err)
	}
	tr := &truth{baseRev: resp.Header.Revision, seen: resp.Header.Revision, base: map[string]objState{}, current: map[string]objState{}}
	for _, kv := range resp.Kvs {
		st, err := decodeState(kv)
		if err != nil {
			return nil, err
		}
		tr.base[st.name], tr.current[st.name] = st, st
	}
	return tr, nil
}

func newEtcdClient(endpoints []string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
}

// follow starts reading etcd's history from where it stopped.
func (tr *truth) follow(endpoints []string) error {
	cli, err := newEtcdClient(endpoints)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	tr.client, tr.cancel, tr.done = cli, cancel, make(chan struct{})
	// The follower: one etcd watch from the revision after the last one
	// read, re-opened if etcd ends it, until pause cancels ctx.
	go func() {
		defer close(tr.done)
		for ctx.Err() == nil {
			tr.watchOnce(ctx, cli)
		}
	}()
	return nil
}

// watchOnce reads one etcd watch until it ends.
func (tr *truth) watchOnce(ctx context.Context, cli *clientv3.Client) {
	tr.mu.Lock()
	from := tr.seen + 1
	tr.mu.Unlock()
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	for resp := range cli.Watch(wctx, truthPrefix, clientv3.WithPrefix(), clientv3.WithRev(from), clientv3.WithProgressNotify()) {
		if resp.CompactRevision != 0 {
			tr.mu.Lock()
			if tr.lostFrom == 0 {
				tr.lostFrom = from
			}
			tr.seen = resp.CompactRevision - 1 // go on, but the check fails
			tr.mu.Unlock()
			return
		}
		if resp.Err() != nil {
			return
		}
		tr.mu.Lock()
		for _, ev := range resp.Events {
			tr.applyLocked(ev)
		}
		if resp.IsProgressNotify() {
			tr.seen = max(tr.seen, resp.Header.Revision)
		}
		tr.mu.Unlock()
	}
}

// applyLocked appends one etcd event, taking the previous value from the
// recorded history rather than from etcd's prevKV.
func (tr *truth) applyLocked(ev *clientv3.Event) {
	name := strings.TrimPrefix(string(ev.Kv.Key), truthPrefix)
	prev, had := tr.current[name]
	te := truthEvent{objState: objState{name: name, rv: ev.Kv.ModRevision}, prevRV: prev.rv}
	if ev.Type == clientv3.EventTypeDelete {
		te.del, te.value = true, prev.value
		delete(tr.current, name)
	} else {
		st, err := decodeState(ev.Kv)
		if err != nil {
			st = objState{name: name, rv: ev.Kv.ModRevision, value: "undecodable: " + err.Error()}
		}
		te.value, te.created = st.value, !had
		tr.current[name] = st
	}
	tr.events = append(tr.events, te)
	tr.seen = max(tr.seen, ev.Kv.ModRevision)
}

// pause stops reading (before minicp is killed).
func (tr *truth) pause() {
	if tr.cancel == nil {
		return
	}
	tr.cancel()
	<-tr.done
	tr.client.Close()
	tr.cancel = nil
}

// waitSeen asks etcd for progress until every change up to rev is read.
func (tr *truth) waitSeen(ctx context.Context, rev int64) error {
	return retry(ctx, func() error {
		tr.mu.Lock()
		seen := tr.seen
		tr.mu.Unlock()
		if seen >= rev {
			return nil
		}
		tr.client.RequestProgress(ctx)
		return fmt.Errorf("etcd's history read up to %d, not yet %d", seen, rev)
	})
}

// state returns etcd's current state as read so far, and the revision of
// the last change.
func (tr *truth) state() (map[string]objState, int64) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := make(map[string]objState, len(tr.current))
	for k, v := range tr.current {
		out[k] = v
	}
	last := tr.baseRev
	if len(tr.events) > 0 {
		last = tr.events[len(tr.events)-1].rv
	}
	return out, last
}

// snapshot returns a copy of the history for offline checks.
func (tr *truth) snapshot() history {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	h := history{baseRev: tr.baseRev, base: tr.base, events: append([]truthEvent(nil), tr.events...), lostFrom: tr.lostFrom}
	h.index()
	return h
}

// decodeState decodes a stored ConfigMap, protobuf or JSON as stored.
func decodeState(kv *mvccpb.KeyValue) (objState, error) {
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(kv.Value, nil, nil)
	if err != nil {
		return objState{}, fmt.Errorf("decoding %s: %w", kv.Key, err)
	}
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return objState{}, fmt.Errorf("%s holds a %T, not a ConfigMap", kv.Key, obj)
	}
	return objState{name: cm.Name, rv: kv.ModRevision, value: cm.Data[valueKey]}, nil
}

// history is an immutable copy of the truth with indexes for the checks.
type history struct {
	baseRev  int64
	base     map[string]objState
	events   []truthEvent
	lostFrom int64
	// byKey lists each name's versions in order: base first, deletes with
	// del set.
	byKey map[string][]truthEvent
}

func (h *history) index() {
	h.byKey = map[string][]truthEvent{}
	for name, st := range h.base {
		h.byKey[name] = append(h.byKey[name], truthEvent{objState: st, created: true})
	}
	for _, ev := range h.events {
		h.byKey[ev.name] = append(h.byKey[ev.name], ev)
	}
}

// next returns the index of the first event after rev.
func (h *history) next(rev int64) int {
	return sort.Search(len(h.events), func(i int) bool { return h.events[i].rv > rev })
}

// stateAt is every object as it was at revision rev (rev >= baseRev).
func (h *history) stateAt(rev int64) map[string]objState {
	out := map[string]objState{}
	for name, versions := range h.byKey {
		i := sort.Search(len(versions), func(i int) bool { return versions[i].rv > rev })
		if i > 0 && !versions[i-1].del {
			out[name] = versions[i-1].objState
		}
	}
	return out
}

// version returns the version of name written at rev, if there is one.
func (h *history) version(name string, rev int64) (truthEvent, bool) {
	versions := h.byKey[name]
	i := sort.Search(len(versions), func(i int) bool { return versions[i].rv >= rev })
	if i < len(versions) && versions[i].rv == rev {
		return versions[i], true
	}
	return truthEvent{}, false
}

// deletedAfter reports whether name was deleted at a revision after rev.
func (h *history) deletedAfter(name string, rev int64) bool {
	for _, v := range h.byKey[name] {
		if v.del && v.rv > rev {
			return true
		}
	}
	return false
}
