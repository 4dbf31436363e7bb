package kinds

// The registry.Store's rules as the built-in kinds shape them: a pod's defaulting,
// validation, status and graceful deletion, a namespace's finalizer.

import (
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"minicp/registry"
)

func TestInvalidPodIsUnprocessableWithFieldCauses(t *testing.T) {
	s, _ := newTestStore(t, registry.Options{})
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "bad"},
		Spec: corev1.PodSpec{
			RestartPolicy: "Sometimes",
			Containers:    []corev1.Container{{Name: "Web_1", Image: "nginx"}, {Name: "side"}, {Name: "side", Image: "x"}},
		},
	}
	_, err := s.Create(testContext(t), podsResource(t), "default", pod, registry.WriteOptions{})
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

func TestCreateDefaultsPodAndSetsSystemFields(t *testing.T) {
	s, _ := newTestStore(t, registry.Options{})
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
	s, _ := newTestStore(t, registry.Options{})
	ctx := testContext(t)
	created := createPod(t, s, newPod("nginx"))
	res := podsResource(t)
	out, _, err := s.Update(ctx, res, "default", "nginx", registry.UpdateOptions{Subresource: "status"}, func(cur runtime.Object) (runtime.Object, error) {
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
	out, _, err = s.Update(ctx, res, "default", "nginx", registry.UpdateOptions{}, func(cur runtime.Object) (runtime.Object, error) {
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
	_, _, err = s.Update(ctx, res, "default", "nginx", registry.UpdateOptions{}, func(cur runtime.Object) (runtime.Object, error) {
		cur.(*corev1.Pod).UID = types.UID("another")
		return cur, nil
	})
	if !apierrors.IsInvalid(err) {
		t.Errorf("changing uid: got %v, want 422", err)
	}
	_, _, err = s.Update(ctx, res, "default", "nginx", registry.UpdateOptions{}, func(cur runtime.Object) (runtime.Object, error) {
		cur.(*corev1.Pod).Spec.RestartPolicy = corev1.RestartPolicyNever
		return cur, nil
	})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "pod updates may not change fields") {
		t.Errorf("changing restartPolicy: got %v, want 422 pod updates may not change fields", err)
	}
}

func TestNamespaceIsActiveWithTheKubernetesFinalizerAndLabelledWithItsName(t *testing.T) {
	s, _ := newTestStore(t, registry.Options{})
	ns, err := s.Get(testContext(t), mustResource(t, corev1.SchemeGroupVersion, "namespaces"), "", "default", registry.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := ns.(*corev1.Namespace)
	if got.Status.Phase != corev1.NamespaceActive || len(got.Spec.Finalizers) != 1 || got.Labels[corev1.LabelMetadataName] != "default" {
		t.Errorf("got phase %s finalizers %v labels %v", got.Status.Phase, got.Spec.Finalizers, got.Labels)
	}
}

// A bound pod stays Terminating for its grace period until a DELETE with
// grace 0 (its kubelet's) removes it; an unbound one goes at once.
func TestABoundPodIsDeletedGracefullyAndAnUnboundOneAtOnce(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s, client := newTestStore(t, registry.Options{Now: func() time.Time { return now }})
	ctx := testContext(t)
	res := podsResource(t)
	createPod(t, s, boundPod("bound", 30))

	out, err := s.Delete(ctx, res, "default", "bound", registry.DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := out.(*corev1.Pod)
	if pod.DeletionTimestamp == nil || !pod.DeletionTimestamp.Time.Equal(now.Add(30*time.Second)) || *pod.DeletionGracePeriodSeconds != 30 {
		t.Fatalf("after DELETE: deletionTimestamp %v grace %v, want now+30s and 30", pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds)
	}
	longer := int64(60)
	again, err := s.Delete(ctx, res, "default", "bound", registry.DeleteOptions{GracePeriodSeconds: &longer})
	if err != nil || again.(*corev1.Pod).ResourceVersion != pod.ResourceVersion {
		t.Fatalf("DELETE with a longer grace: %v %v, want the pod unchanged", again, err)
	}
	shorter := int64(10)
	short, err := s.Delete(ctx, res, "default", "bound", registry.DeleteOptions{GracePeriodSeconds: &shorter})
	if err != nil || !short.(*corev1.Pod).DeletionTimestamp.Time.Equal(now.Add(10*time.Second)) {
		t.Fatalf("DELETE with a shorter grace: %v %v, want deletionTimestamp now+10s", short, err)
	}
	zero := int64(0)
	if _, err := s.Delete(ctx, res, "default", "bound", registry.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if resp, _ := client.Get(ctx, registry.KeyFor(res, "default", "bound")); len(resp.Kvs) != 0 {
		t.Fatalf("pod still stored after a DELETE with grace 0")
	}

	unbound := newPod("unbound")
	createPod(t, s, unbound)
	if _, err := s.Delete(ctx, res, "default", "unbound", registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if resp, _ := client.Get(ctx, registry.KeyFor(res, "default", "unbound")); len(resp.Kvs) != 0 {
		t.Fatalf("unbound pod still stored after DELETE")
	}
}

func TestAFinishedPodIsDeletedAtOnce(t *testing.T) {
	s, client := newTestStore(t, registry.Options{})
	ctx := testContext(t)
	res := podsResource(t)
	createPod(t, s, boundPod("done", 30))
	if _, _, err := s.Update(ctx, res, "default", "done", registry.UpdateOptions{Subresource: "status"}, func(cur runtime.Object) (runtime.Object, error) {
		cur.(*corev1.Pod).Status.Phase = corev1.PodSucceeded
		return cur, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, res, "default", "done", registry.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if resp, _ := client.Get(ctx, registry.KeyFor(res, "default", "done")); len(resp.Kvs) != 0 {
		t.Fatalf("Succeeded pod still stored after DELETE")
	}
}

func boundPod(name string, grace int64) *corev1.Pod {
	pod := newPod(name)
	pod.Spec.NodeName = "node-1"
	pod.Spec.TerminationGracePeriodSeconds = &grace
	return pod
}
