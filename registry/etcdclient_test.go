package registry

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minicp/reqtrace"
)

// metricValue reads a counter's value or a histogram's sample count.
func metricValue(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	if h := out.GetHistogram(); h != nil {
		return float64(h.GetSampleCount())
	}
	return out.GetCounter().GetValue()
}

func etcdRequests(t *testing.T, s *Store, operation, typ string) float64 {
	return metricValue(t, s.metrics.total.WithLabelValues(operation, typ))
}

// M15: etcd_request_duration_seconds{operation,type} around every
// etcd request, named as upstream's storage names them.
func TestEveryEtcdRequestIsMeasuredUnderUpstreamOperationNames(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	ctx := testContext(t)
	pods := podsResource(t)
	names := []string{"create", "get", "list", "update", "delete", "listWithCount"}
	before := map[string]float64{}
	for _, op := range names {
		before[op] = etcdRequests(t, s, op, "pods")
	}
	durationsBefore := metricValue(t, s.metrics.duration.WithLabelValues("get", "pods").(prometheus.Metric))

	createPod(t, s, newPod("web"))
	if _, err := s.Get(ctx, pods, "default", "web", GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(ctx, pods, "default", ListOptions{}); err != nil {
		t.Fatal(err)
	}
	relabel := func(cur runtime.Object) (runtime.Object, error) {
		p := cur.(*corev1.Pod)
		p.Labels["tier"] = "front"
		return p, nil
	}
	if _, _, err := s.Update(ctx, pods, "default", "web", UpdateOptions{}, relabel); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, pods, "default", "web", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.CountObjects(ctx); err != nil {
		t.Fatal(err)
	}

	// Get, update and delete each read the key once; update and delete then
	// write it in one transaction.
	want := map[string]float64{"create": 1, "get": 3, "list": 1, "update": 1, "delete": 1, "listWithCount": 1}
	for _, op := range names {
		if got := etcdRequests(t, s, op, "pods") - before[op]; got != want[op] {
			t.Errorf("etcd_requests_total{operation=%q,type=\"pods\"} grew by %v, want %v", op, got, want[op])
		}
	}
	if got := metricValue(t, s.metrics.duration.WithLabelValues("get", "pods").(prometheus.Metric)) - durationsBefore; got != 3 {
		t.Errorf("etcd_request_duration_seconds{operation=\"get\",type=\"pods\"} got %v new samples, want 3", got)
	}
}

// fakeFaults delays or fails the etcd requests of one kind.
type fakeFaults struct {
	mu    sync.Mutex // guards every field
	delay map[EtcdOp]time.Duration
	fail  map[EtcdOp]error
	seen  map[EtcdOp]int
}

func (f *fakeFaults) BeforeEtcd(ctx context.Context, op EtcdOp, resource string) error {
	f.mu.Lock()
	delay, err := f.delay[op], f.fail[op]
	f.seen[op]++
	f.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return err
}

func TestTheFaultHookDelaysReadsAndFailsWrites(t *testing.T) {
	faults := &fakeFaults{
		delay: map[EtcdOp]time.Duration{EtcdRange: 150 * time.Millisecond},
		fail:  map[EtcdOp]error{EtcdTxn: rpctypes.ErrTimeout},
		seen:  map[EtcdOp]int{},
	}
	client := startEtcd(t)
	s, err := NewStore(client, testResources, Options{Faults: faults})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	pods := podsResource(t)

	tr := reqtrace.New()
	start := time.Now()
	_, err = s.Get(reqtrace.WithTrace(ctx, tr), pods, "default", "missing", GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("Get: got %v, want 404", err)
	}
	if took := time.Since(start); took < 150*time.Millisecond {
		t.Errorf("Get took %v with a 150ms range delay", took)
	}
	if sum := tr.Snapshot(); sum.Spent[reqtrace.Etcd] < 150*time.Millisecond || sum.Count[reqtrace.Etcd] != 1 {
		t.Errorf("trace: etcd=%v in %d requests, want >= 150ms in 1", sum.Spent[reqtrace.Etcd], sum.Count[reqtrace.Etcd])
	}

	nodes := mustResource(t, corev1.SchemeGroupVersion, "nodes")
	_, err = s.Create(ctx, nodes, "", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}, WriteOptions{})
	if !apierrors.IsTimeout(err) {
		t.Fatalf("Create with failing transactions: got %v, want 504 Timeout", err)
	}
	resp, err := client.Get(ctx, KeyFor(nodes, "", "node-1"))
	if err != nil || len(resp.Kvs) != 0 {
		t.Errorf("the failed create reached etcd: %v %v", resp, err)
	}
}

func TestAFailingWatchHookEndsTheWatch(t *testing.T) {
	faults := &fakeFaults{fail: map[EtcdOp]error{EtcdWatch: errors.New("cut")}, seen: map[EtcdOp]int{}}
	client := startEtcd(t)
	s, err := NewStore(client, testResources, Options{Faults: faults})
	if err != nil {
		t.Fatal(err)
	}
	createNamespace(t, s, "default")
	ctx := testContext(t)
	w, err := s.Watch(ctx, podsResource(t), "default", ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := client.Put(ctx, KeyFor(podsResource(t), "default", "x"), "not read"); err != nil {
		t.Fatal(err)
	}
	select {
	case ev, ok := <-w.ResultChan():
		if ok {
			t.Fatalf("got event %v, want the watch to end", ev.Type)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not end after its etcd stream was cut")
	}
}

// M10: with an override, events live in their own etcd:
// their keys, revisions and leases are there, and nowhere else.
func TestOverriddenEventsLiveOnlyInTheirOwnCluster(t *testing.T) {
	main, eventsClient := startEtcd(t), startEtcd(t)
	eventsGR := schema.GroupResource{Resource: "events"}
	s, err := NewStore(main, testResources, Options{EtcdOverrides: map[schema.GroupResource]*clientv3.Client{eventsGR: eventsClient}})
	if err != nil {
		t.Fatal(err)
	}
	createNamespace(t, s, "default")
	ctx := testContext(t)
	events := mustResource(t, corev1.SchemeGroupVersion, "events")

	w, err := s.Watch(ctx, events, "default", ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "web.1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web", Namespace: "default"},
	}
	if _, err := s.Create(ctx, events, "default", ev, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	key := KeyFor(events, "default", "web.1")
	inEvents, err := eventsClient.Get(ctx, key)
	if err != nil || len(inEvents.Kvs) != 1 {
		t.Fatalf("event key in the events cluster: %v %v, want one key", inEvents, err)
	}
	if inMain, err := main.Get(ctx, "/registry/events/", clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil || inMain.Count != 0 {
		t.Errorf("event keys in the main cluster: %v %v, want none", inMain, err)
	}
	ttl, err := eventsClient.TimeToLive(ctx, clientv3.LeaseID(inEvents.Kvs[0].Lease))
	if err != nil || ttl.TTL <= 0 {
		t.Errorf("the event's lease in the events cluster: %v %v, want a live lease", ttl, err)
	}
	list, err := s.List(ctx, events, "default", ListOptions{})
	if err != nil || len(list.(*corev1.EventList).Items) != 1 {
		t.Fatalf("List events: %v %v, want the one event", list, err)
	}
	select {
	case got := <-w.ResultChan():
		if got.Type != "ADDED" {
			t.Errorf("watch: got %v, want ADDED", got.Type)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the events watch saw nothing")
	}
	eventsRev, err := s.CurrentRevisionOf(ctx, events)
	if err != nil || eventsRev != inEvents.Header.Revision {
		t.Errorf("CurrentRevisionOf(events) = %d, %v; want the events cluster's %d", eventsRev, err, inEvents.Header.Revision)
	}
}
