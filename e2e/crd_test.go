package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"minicp/e2e/framework"
)

var crontabsV1 = schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "crontabs"}

// crontabCRD is the CronTab CRD of upstream's documentation: namespaced,
// served at v1, with status and scale subresources and two printer columns.
func crontabCRD() *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	selector := ".status.selector"
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "crontabs.stable.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "stable.example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "crontabs", Singular: "crontab", Kind: "CronTab", ShortNames: []string{"ct"}, Categories: []string{"all"},
			},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{
					Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
					Scale: &apiextensionsv1.CustomResourceSubresourceScale{
						SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: &selector,
					},
				},
				AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
					{Name: "Spec", Type: "string", JSONPath: ".spec.cronSpec"},
					{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"},
				},
			}},
		},
	}
}

func crontab(name, cronSpec string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "stable.example.com/v1", "kind": "CronTab",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"cronSpec": cronSpec, "replicas": int64(1)},
	}}
}

// installCRD creates crd and waits for it to be Established; it returns
// when it was created and when Established was seen.
func installCRD(t *testing.T, ctx context.Context, cs clientset.Interface, crd *apiextensionsv1.CustomResourceDefinition) time.Time {
	t.Helper()
	start := time.Now()
	if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, framework.StateTimeout, crd.Name+" to be Established", func() bool {
		got, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		return err == nil && apihelpers.IsCRDConditionTrue(got, apiextensionsv1.Established) && apihelpers.IsCRDConditionTrue(got, apiextensionsv1.NamesAccepted)
	})
	return start
}

// A CRD goes from created to served as upstream's does, its custom
// resources live at upstream's keys as JSON, and deleting the CRD takes
// every object, the discovery entries and the watch cache with it.
func TestCustomResourceDefinitionLifecycle(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, 2*time.Minute)
	ext := clientset.NewForConfigOrDie(s.RESTConfig)
	dyn := dynamic.NewForConfigOrDie(s.RESTConfig)

	start := installCRD(t, ctx, ext, crontabCRD())
	// The first create may come before discovery and routing have the
	// resource: retry until it is served, and measure when it is.
	var first *unstructured.Unstructured
	framework.Eventually(t, framework.StateTimeout, "the first CronTab to be created", func() bool {
		var err error
		first, err = dyn.Resource(crontabsV1).Namespace("default").Create(ctx, crontab("first", "* * * * */5"), metav1.CreateOptions{})
		return err == nil
	})
	t.Logf("CRD create to first CronTab created: %v", time.Since(start).Round(time.Millisecond))
	if first.GetGeneration() != 1 || first.GetAPIVersion() != "stable.example.com/v1" {
		t.Fatalf("created CronTab: generation %d apiVersion %s, want 1 and stable.example.com/v1", first.GetGeneration(), first.GetAPIVersion())
	}

	// Stored as JSON at /registry/<group>/<plural>/<namespace>/<name>.
	resp, err := s.Etcd.Get(ctx, "/registry/stable.example.com/crontabs/default/first")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("etcd key of the CronTab: %v %v", resp, err)
	}
	var stored map[string]any
	if err := json.Unmarshal(resp.Kvs[0].Value, &stored); err != nil || stored["apiVersion"] != "stable.example.com/v1" {
		t.Fatalf("stored value is not the JSON of a v1 CronTab: %q (%v)", resp.Kvs[0].Value, err)
	}

	// Discovery: legacy and aggregated, with short names and categories.
	// The table serves a new resource before its subscribers hear of it,
	// one after the other, so discovery may still lag the first create
	// (as upstream's discovery lags its handlers): wait for it.
	var resources *metav1.APIResourceList
	framework.Eventually(t, framework.StateTimeout, "stable.example.com/v1 in discovery", func() bool {
		resources, err = s.Clientset.Discovery().ServerResourcesForGroupVersion("stable.example.com/v1")
		return err == nil
	})
	var names []string
	for _, r := range resources.APIResources {
		names = append(names, r.Name)
		if r.Name == "crontabs" && (strings.Join(r.ShortNames, ",") != "ct" || strings.Join(r.Categories, ",") != "all" || !r.Namespaced) {
			t.Errorf("discovery of crontabs: %+v", r)
		}
	}
	if strings.Join(names, ",") != "crontabs,crontabs/status,crontabs/scale" {
		t.Errorf("discovery lists %v, want crontabs, crontabs/status, crontabs/scale", names)
	}

	// A watch through an informer sees later objects.
	factory := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	informer := factory.ForResource(crontabsV1).Informer()
	seen := make(chan string, 16)
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		seen <- obj.(*unstructured.Unstructured).GetName()
	}})
	stop := make(chan struct{})
	factory.Start(stop)
	t.Cleanup(func() { close(stop); factory.Shutdown() })
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatal("the CronTab informer never synced")
	}
	if _, err := dyn.Resource(crontabsV1).Namespace("default").Create(ctx, crontab("second", "0 * * * *"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForNames(t, seen, "first", "second")

	// Status through the status subresource; the main resource keeps it.
	first.Object["status"] = map[string]any{"replicas": int64(1), "selector": "app=first"}
	updated, err := dyn.Resource(crontabsV1).Namespace("default").UpdateStatus(ctx, first, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedInt64(updated.Object, "status", "replicas"); got != 1 || updated.GetGeneration() != 1 {
		t.Fatalf("after the status update: status.replicas %d generation %d, want 1 and 1", got, updated.GetGeneration())
	}
	patched, err := dyn.Resource(crontabsV1).Namespace("default").Patch(ctx, "first", types.MergePatchType,
		[]byte(`{"spec":{"cronSpec":"*/10 * * * *"},"status":{"replicas":7}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedInt64(patched.Object, "status", "replicas"); got != 1 || patched.GetGeneration() != 2 {
		t.Fatalf("after a spec patch: status.replicas %d generation %d, want 1 (kept) and 2", got, patched.GetGeneration())
	}

	// Scale through the declared paths.
	scale, err := s.Clientset.AppsV1().RESTClient().Get().AbsPath("/apis/stable.example.com/v1/namespaces/default/crontabs/first/scale").DoRaw(ctx)
	if err != nil || !strings.Contains(string(scale), `"selector":"app=first"`) || !strings.Contains(string(scale), `"replicas":1`) {
		t.Fatalf("GET scale: %s %v", scale, err)
	}
	if _, err := dyn.Resource(crontabsV1).Namespace("default").Patch(ctx, "first", types.MergePatchType,
		[]byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{}, "scale"); err != nil {
		t.Fatal(err)
	}
	scaled, err := dyn.Resource(crontabsV1).Namespace("default").Get(ctx, "first", metav1.GetOptions{})
	if got, _, _ := unstructured.NestedInt64(scaled.Object, "spec", "replicas"); err != nil || got != 3 {
		t.Fatalf("spec.replicas after scaling to 3: %d %v", got, err)
	}

	// Deleting the CRD deletes its objects, then the CRD, and the
	// resource leaves discovery.
	if err := ext.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, "crontabs.stable.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, framework.StateTimeout, "the CRD to be gone", func() bool {
		_, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "crontabs.stable.example.com", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	keys, err := s.Etcd.Get(ctx, "/registry/stable.example.com/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil || keys.Count != 0 {
		t.Fatalf("keys under /registry/stable.example.com/ after the CRD's deletion: %v %v, want none", keys.Count, err)
	}
	framework.Eventually(t, framework.StateTimeout, "stable.example.com/v1 to leave discovery", func() bool {
		_, err := s.Clientset.Discovery().ServerResourcesForGroupVersion("stable.example.com/v1")
		return apierrors.IsNotFound(err)
	})
	if _, err := dyn.Resource(crontabsV1).Namespace("default").List(ctx, metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("LIST crontabs after the CRD's deletion: %v, want 404", err)
	}
}

// waitForNames reads names from seen until every one of want has come.
func waitForNames(t *testing.T, seen <-chan string, want ...string) {
	t.Helper()
	missing := map[string]bool{}
	for _, n := range want {
		missing[n] = true
	}
	deadline := time.After(10 * time.Second)
	for len(missing) > 0 {
		select {
		case n := <-seen:
			delete(missing, n)
		case <-deadline:
			t.Fatalf("the informer never saw %v", missing)
		}
	}
}
