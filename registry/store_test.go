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
	"k8s.io/apimachinery/pkg/api/resource"
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

func TestInvalidPodIsUnprocessableWithFieldCauses(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "bad"},
		Spec: corev1.PodSpec{
			RestartPolicy: "Sometimes",
			Containers:    []corev1.Container{{Name: "Web_1", Image: "nginx"}, {Name: "side"}, {Name: "side", Image: "x"}},
		},
	}
	_, err := s.Create(testContext(t), podsResource(t), "default", pod, WriteOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("got %v, want 422 Invalid", err)
	}
	status := err.(apierrors.APIStatus).Status()
	if status.Code != http.StatusUnprocessableEntity {
		t.Errorf("got code %d, want 422", status.Code)
	}
	fields := map[string]bool{}
	for _, c := range status.Details.Causes {
		fields[c.Field] = true
	}
	for _, f := range []string{"spec.restartPolicy", "spec.containers[0].name", "spec.containers[1].image", "spec.containers[2].name"} {
		if !fields[f] {
			t.Errorf("no cause for %s in %v", f, status.Details.Causes)
		}
	}
	if !strings.HasPrefix(status.Message, `Pod "bad" is invalid: `) {
		t.Errorf("got message %q", status.Message)
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

func TestCreateDefaultsPodAndSetsSystemFields(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	pod := newPod("nginx")
	pod.Spec.Containers = append(pod.Spec.Containers,
		corev1.Container{Name: "latest", Image: "busybox"},
		corev1.Container{Name: "limited", Image: "registry.local:5000/app:v1", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}}})
	pod.Status.Phase = corev1.PodRunning // clients cannot set status on create
	got := createPod(t, s, pod)
	if got.UID == "" || got.CreationTimestamp.IsZero() || got.Generation != 1 {
		t.Errorf("got uid %q, creationTimestamp %v, generation %d", got.UID, got.CreationTimestamp, got.Generation)
	}
	spec := got.Spec
	if spec.RestartPolicy != corev1.RestartPolicyAlways || spec.DNSPolicy != corev1.DNSClusterFirst ||
		spec.SchedulerName != "default-scheduler" || *spec.TerminationGracePeriodSeconds != 30 ||
		spec.SecurityContext == nil || !*spec.EnableServiceLinks {
		t.Errorf("pod spec not defaulted: %+v", spec)
	}
	pulls := []corev1.PullPolicy{corev1.PullIfNotPresent, corev1.PullAlways, corev1.PullIfNotPresent}
	for i, c := range spec.Containers {
		if c.ImagePullPolicy != pulls[i] || c.TerminationMessagePath != "/dev/termination-log" || c.TerminationMessagePolicy != corev1.TerminationMessageReadFile {
			t.Errorf("container %s: pull %s path %q policy %q", c.Name, c.ImagePullPolicy, c.TerminationMessagePath, c.TerminationMessagePolicy)
		}
	}
	if got.Status.Phase != corev1.PodPending || got.Status.QOSClass != corev1.PodQOSBurstable {
		t.Errorf("got status %s/%s, want Pending/Burstable", got.Status.Phase, got.Status.QOSClass)
	}
}

func TestPodQOSClass(t *testing.T) {
	cpu := resource.MustParse("100m")
	mem := resource.MustParse("64Mi")
	both := corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem}
	cases := []struct {
		name string
		res  corev1.ResourceRequirements
		want corev1.PodQOSClass
	}{
		{"no requests or limits is BestEffort", corev1.ResourceRequirements{}, corev1.PodQOSBestEffort},
		{"requests below limits is Burstable", corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}, Limits: both}, corev1.PodQOSBurstable},
		{"limits alone are Guaranteed", corev1.ResourceRequirements{Limits: both}, corev1.PodQOSGuaranteed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := newPod("p")
			pod.Spec.Containers[0].Resources = tc.res
			defaultPod(pod)
			if got := podQOSClass(pod); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestMainUpdateKeepsStatusAndStatusUpdateKeepsSpec(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	ctx := testContext(t)
	created := createPod(t, s, newPod("nginx"))
	res := podsResource(t)
	out, _, err := s.Update(ctx, res, "default", "nginx", UpdateOptions{Subresource: "status"}, func(cur runtime.Object) (runtime.Object, error) {
		pod := cur.(*corev1.Pod)
		pod.Status.Phase = corev1.PodRunning
		pod.Spec.Containers[0].Image = "nginx:9" // ignored by a status update
		pod.Labels = nil                         // ignored too
		return pod, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pod := out.(*corev1.Pod)
	if pod.Status.Phase != corev1.PodRunning || pod.Spec.Containers[0].Image != "nginx:1.27" || pod.Labels["app"] != "web" || pod.Generation != 1 {
		t.Errorf("status update: phase %s image %s labels %v generation %d", pod.Status.Phase, pod.Spec.Containers[0].Image, pod.Labels, pod.Generation)
	}
	out, _, err = s.Update(ctx, res, "default", "nginx", UpdateOptions{}, func(cur runtime.Object) (runtime.Object, error) {
		pod := cur.(*corev1.Pod)
		pod.Status.Phase = corev1.PodFailed // ignored by a main update
		pod.Spec.Containers[0].Image = "nginx:1.28"
		pod.UID = ""                         // filled from the stored object
		pod.CreationTimestamp = metav1.Now() // immutable
		return pod, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pod = out.(*corev1.Pod)
	if pod.Status.Phase != corev1.PodRunning || pod.Spec.Containers[0].Image != "nginx:1.28" || pod.Generation != 2 {
		t.Errorf("main update: phase %s image %s generation %d", pod.Status.Phase, pod.Spec.Containers[0].Image, pod.Generation)
	}
	if pod.UID != created.UID || !pod.CreationTimestamp.Equal(&created.CreationTimestamp) {
		t.Errorf("immutable metadata changed: uid %s->%s, created %v->%v", created.UID, pod.UID, created.CreationTimestamp, pod.CreationTimestamp)
	}
	_, _, err = s.Update(ctx, res, "default", "nginx", UpdateOptions{}, func(cur runtime.Object) (runtime.Object, error) {
		cur.(*corev1.Pod).UID = types.UID("another")
		return cur, nil
	})
	if !apierrors.IsInvalid(err) {
		t.Errorf("changing uid: got %v, want 422", err)
	}
	_, _, err = s.Update(ctx, res, "default", "nginx", UpdateOptions{}, func(cur runtime.Object) (runtime.Object, error) {
		cur.(*corev1.Pod).Spec.RestartPolicy = corev1.RestartPolicyNever
		return cur, nil
	})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "pod updates may not change fields") {
		t.Errorf("changing restartPolicy: got %v, want 422 pod updates may not change fields", err)
	}
}

func TestNamespaceIsActiveWithTheKubernetesFinalizerAndLabelledWithItsName(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	ns, err := s.Get(testContext(t), mustResource(t, corev1.SchemeGroupVersion, "namespaces"), "", "default", GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := ns.(*corev1.Namespace)
	if got.Status.Phase != corev1.NamespaceActive || len(got.Spec.Finalizers) != 1 || got.Labels[corev1.LabelMetadataName] != "default" {
		t.Errorf("got phase %s finalizers %v labels %v", got.Status.Phase, got.Spec.Finalizers, got.Labels)
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
