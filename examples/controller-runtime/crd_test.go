package mirror

import (
	"testing"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"minicp/e2e/framework"
)

var widgetGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

// widgetCRD is an operator's CRD: namespaced, one version, a status
// subresource.
func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
}

// An operator's test suite starts as it does against envtest: it installs
// its CRD with controller-runtime's client, waits for it to be
// Established, and uses its objects through a manager's cached client.
func TestAnOperatorInstallsItsCRDAndUsesItsObjects(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, 60*time.Second)
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(s.RESTConfig, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	crd := widgetCRD()
	if err := c.Create(ctx, crd); err != nil {
		t.Fatalf("installing the CRD: %v", err)
	}
	framework.Eventually(t, 30*time.Second, "the CRD to be Established", func() bool {
		err := c.Get(ctx, client.ObjectKeyFromObject(crd), crd)
		return err == nil && apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established)
	})

	widget := &unstructured.Unstructured{}
	widget.SetGroupVersionKind(widgetGVK)
	widget.SetName("first")
	widget.SetNamespace("default")
	widget.Object["spec"] = map[string]any{"size": int64(3)}
	framework.Eventually(t, 30*time.Second, "the first Widget to be created", func() bool {
		return c.Create(ctx, widget.DeepCopy()) == nil
	})
	if err := c.Get(ctx, client.ObjectKeyFromObject(widget), widget); err != nil {
		t.Fatal(err)
	}
	widget.Object["status"] = map[string]any{"ready": true}
	if err := c.Status().Update(ctx, widget); err != nil {
		t.Fatalf("status update: %v", err)
	}

	mgr, err := ctrl.NewManager(s.RESTConfig, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	stopManager := runManager(t, mgr)
	framework.Eventually(t, 20*time.Second, "the manager's cached client to list the Widget with its status", func() bool {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(widgetGVK.GroupVersion().WithKind("WidgetList"))
		if err := mgr.GetClient().List(ctx, list, client.InNamespace("default")); err != nil || len(list.Items) != 1 {
			return false
		}
		ready, _, _ := unstructured.NestedBool(list.Items[0].Object, "status", "ready")
		return ready
	})
	stopManager()

	if err := c.Delete(ctx, crd); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 30*time.Second, "the CRD and its Widgets to be gone", func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(crd), crd))
	})
}
