package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"minicp/embedetcd"
)

// M2: objects live under upstream's keys, as protobuf
// behind the "k8s\x00" magic prefix, without their resourceVersion.
func TestObjectsAreStoredUnderUpstreamKeysAsProtobufEnvelope(t *testing.T) {
	s, client := newTestStore(t, Options{})
	ctx := testContext(t)
	createPod(t, s, newPod("nginx"))
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}
	if _, err := s.Create(ctx, mustResource(t, corev1.SchemeGroupVersion, "nodes"), "", node, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, mustResource(t, coordinationV1, "leases"), "default", newLease("node-1"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"/registry/pods/default/nginx", "/registry/minions/node-1", "/registry/namespaces/default", "/registry/leases/default/node-1"} {
		resp, err := client.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) != 1 {
			t.Fatalf("key %s: got %d keys, want 1", key, len(resp.Kvs))
		}
		value := resp.Kvs[0].Value
		if !bytes.HasPrefix(value, []byte("k8s\x00")) {
			t.Errorf("key %s: value starts with %q, want the k8s\\x00 envelope", key, value[:min(8, len(value))])
		}
	}
	resp, err := client.Get(ctx, "/registry/pods/default/nginx")
	if err != nil {
		t.Fatal(err)
	}
	stored, err := s.Decode(podsResource(t), resp.Kvs[0].Value, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := stored.(*corev1.Pod).ResourceVersion; got != "0" {
		t.Errorf("stored value carries resourceVersion %q, want none", got)
	}
	if got := KeyFor(podsResource(t), "default", "nginx"); got != "/registry/pods/default/nginx" {
		t.Errorf("KeyFor = %q", got)
	}
}

func TestJSONMediaTypeStoresJSON(t *testing.T) {
	s, client := newTestStore(t, Options{StorageMediaType: MediaTypeJSON})
	createPod(t, s, newPod("nginx"))
	resp, err := client.Get(testContext(t), "/registry/pods/default/nginx")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(resp.Kvs[0].Value, &doc); err != nil {
		t.Fatalf("stored value is not JSON: %v", err)
	}
	if doc["kind"] != "Pod" || doc["apiVersion"] != "v1" {
		t.Errorf("got kind %v apiVersion %v, want Pod v1", doc["kind"], doc["apiVersion"])
	}
	if _, ok := doc["metadata"].(map[string]any)["resourceVersion"]; ok {
		t.Error("stored JSON carries a resourceVersion")
	}
}

// M4: resourceVersion is the mod revision, not the create revision.
func TestResourceVersionIsModRevisionNotCreateRevision(t *testing.T) {
	s, client := newTestStore(t, Options{})
	ctx := testContext(t)
	created := createPod(t, s, newPod("nginx"))
	updated, _, err := s.Update(ctx, podsResource(t), "default", "nginx", UpdateOptions{}, func(cur runtime.Object) (runtime.Object, error) {
		pod := cur.(*corev1.Pod)
		pod.Labels["tier"] = "frontend"
		return pod, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Get(ctx, "/registry/pods/default/nginx")
	if err != nil {
		t.Fatal(err)
	}
	kv := resp.Kvs[0]
	if got := rvOf(t, updated.(*corev1.Pod)); got != kv.ModRevision {
		t.Errorf("update returned resourceVersion %d, want mod revision %d", got, kv.ModRevision)
	}
	if kv.CreateRevision == kv.ModRevision || rvOf(t, created) != kv.CreateRevision {
		t.Errorf("create revision %d, mod revision %d, created rv %d", kv.CreateRevision, kv.ModRevision, rvOf(t, created))
	}
	got, err := s.Get(ctx, podsResource(t), "default", "nginx", GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rv := rvOf(t, got.(*corev1.Pod)); rv != kv.ModRevision {
		t.Errorf("get returned resourceVersion %d, want mod revision %d", rv, kv.ModRevision)
	}
}

// M4: an update carrying an old resourceVersion is refused
// with upstream's 409 and leaves etcd untouched.
func TestStaleUpdateIsConflictAndLeavesEtcdUnchanged(t *testing.T) {
	s, client := newTestStore(t, Options{})
	ctx := testContext(t)
	stale := createPod(t, s, newPod("nginx"))
	if _, _, err := s.Update(ctx, podsResource(t), "default", "nginx", UpdateOptions{}, func(cur runtime.Object) (runtime.Object, error) {
		cur.(*corev1.Pod).Labels["v"] = "2"
		return cur, nil
	}); err != nil {
		t.Fatal(err)
	}
	before, err := client.Get(ctx, "/registry/pods/default/nginx")
	if err != nil {
		t.Fatal(err)
	}
	stale.Labels["v"] = "stale"
	_, _, err = s.Update(ctx, podsResource(t), "default", "nginx", UpdateOptions{}, func(runtime.Object) (runtime.Object, error) {
		return stale, nil
	})
	if !apierrors.IsConflict(err) {
		t.Fatalf("got %v, want 409 Conflict", err)
	}
	want := `Operation cannot be fulfilled on pods "nginx": the object has been modified; please apply your changes to the latest version and try again`
	if err.Error() != want {
		t.Errorf("got message %q, want %q", err.Error(), want)
	}
	after, err := client.Get(ctx, "/registry/pods/default/nginx")
	if err != nil {
		t.Fatal(err)
	}
	if after.Kvs[0].ModRevision != before.Kvs[0].ModRevision || !bytes.Equal(after.Kvs[0].Value, before.Kvs[0].Value) {
		t.Error("a refused update changed etcd")
	}
}

func TestUpdateWithoutResourceVersionRetriesUntilItApplies(t *testing.T) {
	s, client := newTestStore(t, Options{})
	ctx := testContext(t)
	createPod(t, s, newPod("nginx"))
	calls := 0
	out, _, err := s.Update(ctx, podsResource(t), "default", "nginx", UpdateOptions{}, func(cur runtime.Object) (runtime.Object, error) {
		calls++
		if calls == 1 { // someone else writes between our read and our write
			if _, _, err := s.Update(ctx, podsResource(t), "default", "nginx", UpdateOptions{}, func(c runtime.Object) (runtime.Object, error) {
				c.(*corev1.Pod).Labels["other"] = "yes"
				return c, nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		pod := cur.(*corev1.Pod)
		pod.ResourceVersion = ""
		pod.Labels["mine"] = "yes"
		return pod, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Errorf("tryUpdate called %d times, want 2", calls)
	}
	pod := out.(*corev1.Pod)
	if pod.Labels["other"] != "yes" || pod.Labels["mine"] != "yes" {
		t.Errorf("got labels %v, want both writes", pod.Labels)
	}
	resp, err := client.Get(ctx, "/registry/pods/default/nginx")
	if err != nil {
		t.Fatal(err)
	}
	if rvOf(t, pod) != resp.Kvs[0].ModRevision {
		t.Errorf("got rv %s, want %d", pod.ResourceVersion, resp.Kvs[0].ModRevision)
	}
}

func TestUpdateThatChangesNothingDoesNotWrite(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	created := createPod(t, s, newPod("nginx"))
	out, _, err := s.Update(testContext(t), podsResource(t), "default", "nginx", UpdateOptions{}, func(cur runtime.Object) (runtime.Object, error) {
		return cur, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.(*corev1.Pod).ResourceVersion != created.ResourceVersion {
		t.Errorf("got rv %s, want unchanged %s", out.(*corev1.Pod).ResourceVersion, created.ResourceVersion)
	}
}

func TestUpdateOfMissingObjectIsNotFoundUnlessCreateOnUpdate(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	ctx := testContext(t)
	_, _, err := s.Update(ctx, podsResource(t), "default", "ghost", UpdateOptions{}, func(runtime.Object) (runtime.Object, error) {
		return newPod("ghost"), nil
	})
	if !apierrors.IsNotFound(err) || err.Error() != `pods "ghost" not found` {
		t.Fatalf("got %v, want 404 pods \"ghost\" not found", err)
	}
	leases := mustResource(t, coordinationV1, "leases")
	out, created, err := s.Update(ctx, leases, "default", "node-1", UpdateOptions{}, func(cur runtime.Object) (runtime.Object, error) {
		if cur != nil {
			t.Errorf("got current %v, want nil", cur)
		}
		return newLease("node-1"), nil
	})
	if err != nil || !created {
		t.Fatalf("got created=%v err=%v, want a created lease", created, err)
	}
	if m := out.(metav1.Object); m.GetUID() == "" || m.GetResourceVersion() == "" {
		t.Errorf("created lease lacks uid or resourceVersion: %+v", m)
	}
}

func TestDoubleCreateIsAlreadyExists(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	createPod(t, s, newPod("nginx"))
	_, err := s.Create(testContext(t), podsResource(t), "default", newPod("nginx"), WriteOptions{})
	if !apierrors.IsAlreadyExists(err) || err.Error() != `pods "nginx" already exists` {
		t.Fatalf("got %v, want 409 pods \"nginx\" already exists", err)
	}
}

func TestNameOrGenerateNameIsRequiredAndGenerateNameAddsSuffix(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	ctx := testContext(t)
	pod := newPod("")
	_, err := s.Create(ctx, podsResource(t), "default", pod, WriteOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "name or generateName is required") {
		t.Fatalf("got %v, want 422 name or generateName is required", err)
	}
	pod.GenerateName = "web-"
	out, err := s.Create(ctx, podsResource(t), "default", pod, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if name := out.(*corev1.Pod).Name; !strings.HasPrefix(name, "web-") || len(name) != len("web-")+5 {
		t.Errorf("got generated name %q, want web- and 5 characters", name)
	}
}

func TestDeleteHonoursPreconditions(t *testing.T) {
	s, client := newTestStore(t, Options{})
	ctx := testContext(t)
	created := createPod(t, s, newPod("nginx"))
	otherUID := types.UID("not-the-uid")
	_, err := s.Delete(ctx, podsResource(t), "default", "nginx", DeleteOptions{Preconditions: &metav1.Preconditions{UID: &otherUID}})
	if !apierrors.IsConflict(err) {
		t.Fatalf("got %v, want 409", err)
	}
	want := `Operation cannot be fulfilled on pods "nginx": StorageError: invalid object, Code: 4, Key: /registry/pods/default/nginx, ` +
		`ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: not-the-uid, UID in object meta: ` + string(created.UID)
	if err.Error() != want {
		t.Errorf("got %q\nwant %q", err.Error(), want)
	}
	staleRV := "1"
	_, err = s.Delete(ctx, podsResource(t), "default", "nginx", DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &staleRV}})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: "+created.ResourceVersion) {
		t.Fatalf("got %v, want 409 on resourceVersion precondition", err)
	}
	if resp, err := client.Get(ctx, "/registry/pods/default/nginx"); err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("pod gone after refused deletes: %v", err)
	}
	_, err = s.Delete(ctx, podsResource(t), "default", "nginx", DeleteOptions{Preconditions: &metav1.Preconditions{UID: &created.UID, ResourceVersion: &created.ResourceVersion}})
	if err != nil {
		t.Fatalf("delete with matching preconditions: %v", err)
	}
}

func TestDeleteReturnsLastStateAtDeletionRevision(t *testing.T) {
	s, client := newTestStore(t, Options{})
	ctx := testContext(t)
	created := createPod(t, s, newPod("nginx"))
	out, err := s.Delete(ctx, podsResource(t), "default", "nginx", DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Get(ctx, "/registry/pods/default/nginx")
	if err != nil {
		t.Fatal(err)
	}
	deleted := out.(*corev1.Pod)
	if len(resp.Kvs) != 0 || rvOf(t, deleted) != resp.Header.Revision || deleted.UID != created.UID {
		t.Errorf("got rv %s uid %s (kvs %d), want rv %d uid %s", deleted.ResourceVersion, deleted.UID, len(resp.Kvs), resp.Header.Revision, created.UID)
	}
	if _, err := s.Delete(ctx, podsResource(t), "default", "nginx", DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("second delete: got %v, want 404", err)
	}
}

func TestObjectLargerThanEtcdRequestLimitIsEntityTooLarge(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	// A node reporting an absurd list of images: only etcd's limit applies.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "big"}}
	for i := 0; i < 2000; i++ {
		node.Status.Images = append(node.Status.Images, corev1.ContainerImage{Names: []string{strings.Repeat("x", 1000)}})
	}
	_, err := s.Create(testContext(t), mustResource(t, corev1.SchemeGroupVersion, "nodes"), "", node, WriteOptions{})
	if !apierrors.IsRequestEntityTooLargeError(err) {
		t.Fatalf("got %v, want 413", err)
	}
}

// Events are bound to an etcd lease, as with upstream's --event-ttl.
func TestEventsAreBoundToLeaseOfEventTTL(t *testing.T) {
	ttl := 10 * time.Minute
	s, client := newTestStore(t, Options{EventTTL: ttl})
	ctx := testContext(t)
	events := mustResource(t, corev1.SchemeGroupVersion, "events")
	for _, name := range []string{"nginx.1", "nginx.2"} {
		ev := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: name},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "nginx"},
			Reason:         "Scheduled", Type: corev1.EventTypeNormal,
		}
		if _, err := s.Create(ctx, events, "default", ev, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := client.Get(ctx, "/registry/events/default/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 2 {
		t.Fatalf("got %d events, want 2", len(resp.Kvs))
	}
	lease := clientv3.LeaseID(resp.Kvs[0].Lease)
	if lease == 0 || resp.Kvs[1].Lease != resp.Kvs[0].Lease {
		t.Fatalf("events bound to leases %x and %x, want one shared lease", resp.Kvs[0].Lease, resp.Kvs[1].Lease)
	}
	live, err := client.TimeToLive(ctx, lease)
	if err != nil {
		t.Fatal(err)
	}
	granted := time.Duration(live.GrantedTTL) * time.Second
	if granted < ttl || granted > ttl+reuseWindow(ttl) || live.TTL <= 0 {
		t.Errorf("got granted TTL %v (remaining %ds), want between %v and %v", granted, live.TTL, ttl, ttl+reuseWindow(ttl))
	}
	pods, err := client.Get(ctx, "/registry/namespaces/default")
	if err != nil || pods.Kvs[0].Lease != 0 {
		t.Errorf("a namespace key is bound to a lease: %v", err)
	}
}

// What the Store derives from a descriptor follows the table: a TTLEvent
// resource added after the Store was made gets its keys bound to a lease
// of EventTTL on its first write, as one in the table from the start does.
func TestAResourceAddedAtRunTimeWithATTLGetsItsLease(t *testing.T) {
	ttl := 10 * time.Minute
	table := newTestTable()
	s, err := NewStore(startEtcd(t), table, Options{EventTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	notes := &Resource{
		GroupVersion: corev1.SchemeGroupVersion, Name: "shortlivedconfigmaps", SingularName: "shortlivedconfigmap",
		Kind: "ConfigMap", ListKind: "ConfigMapList", Namespaced: true, Prefix: "/registry/shortlivedconfigmaps", TTL: TTLEvent,
		New: func() runtime.Object { return &corev1.ConfigMap{} }, NewList: func() runtime.Object { return &corev1.ConfigMapList{} },
	}
	if err := table.Change(nil, []*Resource{notes}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "note"}}
	if _, err := s.Create(ctx, notes, "default", cm, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	resp, err := s.Client().Get(ctx, "/registry/shortlivedconfigmaps/default/note")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("got %v, %v; want the key", resp, err)
	}
	lease := clientv3.LeaseID(resp.Kvs[0].Lease)
	if lease == 0 {
		t.Fatal("the key of a TTLEvent resource added at run time is bound to no lease")
	}
	live, err := s.Client().TimeToLive(ctx, lease)
	if err != nil {
		t.Fatal(err)
	}
	if granted := time.Duration(live.GrantedTTL) * time.Second; granted < ttl || granted > ttl+reuseWindow(ttl) {
		t.Errorf("got granted TTL %v, want between %v and %v", granted, ttl, ttl+reuseWindow(ttl))
	}
}

func TestEtcdErrorsBecomeAPIErrors(t *testing.T) {
	cases := []struct {
		name string
		err  error
		code int32
	}{
		{"compacted is 410", rpctypes.ErrCompacted, http.StatusGone},
		{"no space is 500 with recovery advice", rpctypes.ErrNoSpace, http.StatusInternalServerError},
		{"deadline is 504", context.DeadlineExceeded, http.StatusGatewayTimeout},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := storageError(tc.err)
			status, ok := err.(apierrors.APIStatus)
			if !ok || status.Status().Code != tc.code {
				t.Fatalf("got %v, want code %d", err, tc.code)
			}
		})
	}
	if msg := storageError(rpctypes.ErrNoSpace).Error(); !strings.Contains(msg, "database space exceeded") || !strings.Contains(msg, "alarm disarm") {
		t.Errorf("got %q, want etcd's message and how to recover", msg)
	}
}

// M17: when etcd's quota is exhausted, writes fail with a 500 that carries
// etcd's message, says what etcd did with this write and the way out. etcd
// checks the quota before proposing a write (refusing it) and again when
// applying it (applying it and answering NOSPACE): the message must say
// which, and what it says must be what etcd holds.
func TestWriteBeyondEtcdQuotaSaysWhetherEtcdAppliedIt(t *testing.T) {
	s, client := newTestStore(t, Options{}, func(cfg *embedetcd.Config) { cfg.QuotaBackendBytes = 2 << 20 })
	ctx := testContext(t)
	configMaps := mustResource(t, corev1.SchemeGroupVersion, "configmaps")
	create := func(name string) error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"x": strings.Repeat("x", 900<<10)}}
		_, err := s.Create(ctx, configMaps, "default", cm, WriteOptions{})
		return err
	}
	checkClaim := func(name string, err error) {
		t.Helper()
		status, ok := err.(apierrors.APIStatus)
		if !ok || status.Status().Code != http.StatusInternalServerError ||
			!strings.Contains(err.Error(), "etcdserver: mvcc: database space exceeded") || !strings.Contains(err.Error(), "etcdctl alarm disarm") {
			t.Fatalf("%s: got %v, want 500 with etcd's message and recovery advice", name, err)
		}
		resp, gerr := client.Get(ctx, KeyFor(configMaps, "default", name))
		if gerr != nil {
			t.Fatal(gerr)
		}
		switch {
		case strings.Contains(err.Error(), "nothing was written"):
			if len(resp.Kvs) != 0 {
				t.Errorf("%s: the message says nothing was written, but etcd holds the key at revision %d", name, resp.Kvs[0].ModRevision)
			}
		case strings.Contains(err.Error(), "etcd applied this write at revision"):
			if len(resp.Kvs) != 1 || !strings.Contains(err.Error(), fmt.Sprintf("at revision %d ", resp.Kvs[0].ModRevision)) {
				t.Errorf("%s: the message says the write was applied, but etcd holds %d keys (%v)", name, len(resp.Kvs), err)
			}
		default:
			t.Errorf("%s: the message does not say what etcd did with the write: %v", name, err)
		}
	}
	var err error
	i := 0
	for ; i < 100 && err == nil; i++ {
		err = create(fmt.Sprintf("filler-%d", i))
	}
	if err == nil {
		t.Fatal("etcd accepted 90 MB with a 2 MiB quota")
	}
	checkClaim(fmt.Sprintf("filler-%d", i-1), err) // the write that crossed the quota
	checkClaim("refused", create("refused"))       // under the alarm
	if err := create("refused"); !strings.Contains(fmt.Sprint(err), "nothing was written") {
		t.Errorf("a write under the alarm: got %v, want it refused with nothing written", err)
	}
}

// M4: compare-and-swap on the mod revision loses no update,
// however many writers race.
func TestConcurrentUnconditionalUpdatesLoseNothing(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	ctx := testContext(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "counter"}, Data: map[string]string{"n": "0"}}
	configMaps := mustResource(t, corev1.SchemeGroupVersion, "configmaps")
	if _, err := s.Create(ctx, configMaps, "default", cm, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	const writers, increments = 8, 10
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		go func() {
			for i := 0; i < increments; i++ {
				_, _, err := s.Update(ctx, configMaps, "default", "counter", UpdateOptions{}, func(cur runtime.Object) (runtime.Object, error) {
					cm := cur.(*corev1.ConfigMap)
					n, err := strconv.Atoi(cm.Data["n"])
					if err != nil {
						return nil, err
					}
					cm.Data["n"] = strconv.Itoa(n + 1)
					cm.ResourceVersion = "" // unconditional: retried on every lost race
					return cm, nil
				})
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for w := 0; w < writers; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	out, err := s.Get(ctx, configMaps, "default", "counter", GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(*corev1.ConfigMap).Data["n"]; got != strconv.Itoa(writers*increments) {
		t.Errorf("got counter %s, want %d", got, writers*increments)
	}
}
