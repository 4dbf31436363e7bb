package e2e

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"minicp/e2e/framework"
)

func webDeployment(name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
}

// Informers of every API group sync (in watch-list mode, client-go's
// default) and see what is created afterwards, over protobuf.
func TestInformersOfEveryGroupSyncAndSeeNewObjects(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, 60*time.Second)
	cs := s.ProtobufClientset(t)
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("default"))
	watched := map[string]cache.SharedIndexInformer{
		"secrets":             factory.Core().V1().Secrets().Informer(),
		"services":            factory.Core().V1().Services().Informer(),
		"serviceaccounts":     factory.Core().V1().ServiceAccounts().Informer(),
		"deployments":         factory.Apps().V1().Deployments().Informer(),
		"statefulsets":        factory.Apps().V1().StatefulSets().Informer(),
		"jobs":                factory.Batch().V1().Jobs().Informer(),
		"hpas":                factory.Autoscaling().V2().HorizontalPodAutoscalers().Informer(),
		"events.k8s.io":       factory.Events().V1().Events().Informer(),
		"roles":               factory.Rbac().V1().Roles().Informer(),
		"ingresses":           factory.Networking().V1().Ingresses().Informer(),
		"pdbs":                factory.Policy().V1().PodDisruptionBudgets().Informer(),
		"endpointslices":      factory.Discovery().V1().EndpointSlices().Informer(),
		"priorityclasses":     factory.Scheduling().V1().PriorityClasses().Informer(),
		"storageclasses":      factory.Storage().V1().StorageClasses().Informer(),
		"validatingwebhooks":  factory.Admissionregistration().V1().ValidatingWebhookConfigurations().Informer(),
		"persistentvolumes":   factory.Core().V1().PersistentVolumes().Informer(),
		"controllerrevisions": factory.Apps().V1().ControllerRevisions().Informer(),
	}
	stop := make(chan struct{})
	factory.Start(stop)
	defer func() { close(stop); factory.Shutdown() }()
	syncCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for name, inf := range watched {
		if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
			t.Fatalf("the %s informer did not sync", name)
		}
	}
	// The kubernetes Service and its EndpointSlice exist from the start.
	if _, ok, _ := watched["services"].GetStore().GetByKey("default/kubernetes"); !ok {
		t.Error("the services informer has no default/kubernetes")
	}
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, webDeployment("web"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "token"},
		StringData: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.EventsV1().Events("default").Create(ctx, newEventsV1("seen"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, key := range map[string]string{"deployments": "default/web", "secrets": "default/token", "events.k8s.io": "default/seen"} {
		inf := watched[name]
		framework.Eventually(t, framework.StateTimeout, name+" informer to see "+key, func() bool {
			_, ok, _ := inf.GetStore().GetByKey(key)
			return ok
		})
	}
}

func newEventsV1(name string) *eventsv1.Event {
	return &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		EventTime:  metav1.NewMicroTime(time.Now()), ReportingController: "example.com/ctrl", ReportingInstance: "ctrl-1",
		Action: "Sync", Reason: "Synced", Type: corev1.EventTypeNormal, Note: "done",
		Regarding: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: "default"},
	}
}

// events.k8s.io/v1 and core/v1 Events are one object at one key, as
// upstream: a client of either group reads what the other wrote.
func TestEventsOfBothGroupsAreTheSameObjects(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, 30*time.Second)
	if _, err := s.Clientset.EventsV1().Events("default").Create(ctx, newEventsV1("e1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	core, err := s.Clientset.CoreV1().Events("default").Get(ctx, "e1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if core.Message != "done" || core.InvolvedObject.Name != "p" || core.ReportingController != "example.com/ctrl" {
		t.Fatalf("core/v1 view: %+v", core)
	}
	resp, err := s.Etcd.Get(ctx, "/registry/events/default/e1")
	if err != nil || len(resp.Kvs) != 1 || resp.Kvs[0].Lease == 0 {
		t.Fatalf("etcd key /registry/events/default/e1: %v, %d keys (bound to the --event-ttl lease)", err, len(resp.Kvs))
	}
	list, err := s.Clientset.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].Note != "done" {
		t.Fatalf("events.k8s.io list: %v %+v", err, list)
	}
}

// metadata.generation is 1 on create and grows with spec changes only;
// the status subresource changes the status and nothing else (M4's
// resourceVersion still moves with every write).
func TestGenerationGrowsWithSpecChangesOnly(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, 30*time.Second)
	deployments := s.Clientset.AppsV1().Deployments("default")
	d, err := deployments.Create(ctx, webDeployment("gen"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Generation != 1 || *d.Spec.Replicas != 1 || *d.Spec.RevisionHistoryLimit != 10 || d.Spec.Strategy.RollingUpdate.MaxSurge.String() != "25%" {
		t.Fatalf("created: generation %d, spec %+v", d.Generation, d.Spec)
	}
	d.Labels = map[string]string{"tier": "web"}
	if d, err = deployments.Update(ctx, d, metav1.UpdateOptions{}); err != nil || d.Generation != 1 {
		t.Fatalf("a label change: generation %d, %v; want 1", d.Generation, err)
	}
	d.Status.Replicas, d.Status.ObservedGeneration = 4, 1
	if d, err = deployments.UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil || d.Generation != 1 || d.Status.Replicas != 4 {
		t.Fatalf("a status update: generation %d, status %+v, %v", d.Generation, d.Status, err)
	}
	d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
	d.Status.Replicas = 0
	if d, err = deployments.Update(ctx, d, metav1.UpdateOptions{}); err != nil || d.Generation != 2 || d.Status.Replicas != 4 {
		t.Fatalf("a spec change: generation %d, status %+v, %v; want 2 and the stored status", d.Generation, d.Status, err)
	}
	scale, err := deployments.GetScale(ctx, "gen", metav1.GetOptions{})
	if err != nil || scale.Spec.Replicas != 1 || scale.Status.Selector != "app=gen" {
		t.Fatalf("scale: %+v, %v", scale, err)
	}
	scale.Spec.Replicas = 5
	if _, err := deployments.UpdateScale(ctx, "gen", scale, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if d, err = deployments.Get(ctx, "gen", metav1.GetOptions{}); err != nil || *d.Spec.Replicas != 5 || d.Generation != 3 {
		t.Fatalf("after scaling: replicas %d, generation %d, %v", *d.Spec.Replicas, d.Generation, err)
	}
	stale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "gen", ResourceVersion: scale.ResourceVersion}, Spec: autoscalingv1.ScaleSpec{Replicas: 2}}
	if _, err := deployments.UpdateScale(ctx, "gen", stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("a scale at a stale resourceVersion: got %v, want 409", err)
	}
	bad := webDeployment("bad")
	bad.Spec.Template.Labels = map[string]string{"app": "other"}
	_, err = deployments.Create(ctx, bad, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.template.metadata.labels") {
		t.Fatalf("a selector that does not match: got %v, want 422 naming spec.template.metadata.labels", err)
	}
}

// ClusterIPs and NodePorts are never given twice, also across a restart:
// the allocations live in etcd at upstream's /registry/ranges keys.
func TestClusterIPsStayUniqueAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	seen := map[string]string{}
	createServices := func(cs *kubernetes.Clientset, prefix string) {
		ctx := framework.Context(t, 30*time.Second)
		for i := 0; i < 5; i++ {
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: prefix + string(rune('a'+i))},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}}}}
			got, err := cs.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ip, port := got.Spec.ClusterIP, got.Spec.Ports[0].NodePort
			if !(&net.IPNet{IP: net.ParseIP("10.0.0.0"), Mask: net.CIDRMask(24, 32)}).Contains(net.ParseIP(ip)) || port < 30000 || port > 32767 {
				t.Fatalf("%s: clusterIP %s, nodePort %d outside the default ranges", svc.Name, ip, port)
			}
			for _, v := range []string{ip, fmt.Sprint("port ", port)} {
				if other, dup := seen[v]; dup {
					t.Fatalf("%s and %s were both given %q", other, svc.Name, v)
				}
				seen[v] = svc.Name
			}
		}
	}
	first := framework.Start(t, framework.Options{DataDir: dir})
	createServices(first.Clientset, "before-")
	first.Stop(t)
	second := framework.Start(t, framework.Options{DataDir: dir})
	createServices(second.Clientset, "after-")
	ctx := framework.Context(t, 30*time.Second)
	for _, key := range []string{"/registry/ranges/serviceips", "/registry/ranges/servicenodeports"} {
		if resp, err := second.Etcd.Get(ctx, key); err != nil || len(resp.Kvs) != 1 {
			t.Errorf("%s: %v", key, err)
		}
	}
	kube, err := second.Clientset.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil || kube.Spec.ClusterIP != "10.0.0.1" {
		t.Fatalf("the kubernetes Service: %v %v", kube, err)
	}
	if seen["10.0.0.1"] != "" {
		t.Errorf("10.0.0.1, the kubernetes Service's address, was given to %s", seen["10.0.0.1"])
	}
}
