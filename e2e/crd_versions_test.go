package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"minicp/e2e/framework"
)

// withVersions returns the CronTab CRD served at v1 (storage) and v2,
// with the given conversion strategy.
func withVersions(strategy apiextensionsv1.ConversionStrategyType) *apiextensionsv1.CustomResourceDefinition {
	crd := crontabCRD()
	v2 := crd.Spec.Versions[0]
	v2.Name, v2.Storage = "v2", false
	crd.Spec.Versions = append(crd.Spec.Versions, v2)
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: strategy}
	if strategy == apiextensionsv1.WebhookConverter {
		url := "https://127.0.0.1:1/convert"
		crd.Spec.Conversion.Webhook = &apiextensionsv1.WebhookConversion{
			ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url},
			ConversionReviewVersions: []string{"v1"},
		}
	}
	return crd
}

// createWhenServed creates obj, retrying until the resource is served.
func createWhenServed(t *testing.T, ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	gvr := crontabsV1
	gvr.Version = strings.TrimPrefix(obj.GetAPIVersion(), "stable.example.com/")
	var created *unstructured.Unstructured
	framework.Eventually(t, framework.StateTimeout, "the CronTab to be created", func() bool {
		var err error
		created, err = dyn.Resource(gvr).Namespace("default").Create(ctx, obj, metav1.CreateOptions{})
		return err == nil
	})
	return created
}

// With the None strategy, every served version reads and writes the same
// objects, stored at the storage version; only apiVersion differs.
func TestCustomResourceVersionsWithNoneConversionShareObjects(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, time.Minute)
	dyn := dynamic.NewForConfigOrDie(s.RESTConfig)
	installCRD(t, ctx, clientset.NewForConfigOrDie(s.RESTConfig), withVersions(apiextensionsv1.NoneConverter))

	obj := crontab("via-v2", "* * * * *")
	obj.SetAPIVersion("stable.example.com/v2")
	createWhenServed(t, ctx, dyn, obj)
	resp, err := s.Etcd.Get(ctx, "/registry/stable.example.com/crontabs/default/via-v2")
	if err != nil || len(resp.Kvs) != 1 || !strings.Contains(string(resp.Kvs[0].Value), `"apiVersion":"stable.example.com/v1"`) {
		t.Fatalf("a v2 create is stored at the storage version v1: %v %v", resp, err)
	}
	got, err := dyn.Resource(crontabsV1).Namespace("default").Get(ctx, "via-v2", metav1.GetOptions{})
	if err != nil || got.GetAPIVersion() != "stable.example.com/v1" {
		t.Fatalf("read at v1: %v %v", got, err)
	}
	// Discovery prefers v2, as upstream's (by version priority, whatever
	// the storage version).
	groups, err := s.Clientset.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, g := range groups.Groups {
		if g.Name != "stable.example.com" {
			continue
		}
		found = true
		if g.PreferredVersion.Version != "v2" || len(g.Versions) != 2 {
			t.Errorf("discovery of stable.example.com: %+v, want v2 preferred, then v1", g)
		}
	}
	if !found {
		t.Errorf("discovery lists no group stable.example.com: %+v", groups.Groups)
	}
}

// With the Webhook strategy, minicp (which calls no webhooks) serves the
// storage version and answers a request that needs a conversion with a
// Status saying so.
func TestCustomResourceWebhookConversionIsRefusedWithAStatus(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, time.Minute)
	dyn := dynamic.NewForConfigOrDie(s.RESTConfig)
	installCRD(t, ctx, clientset.NewForConfigOrDie(s.RESTConfig), withVersions(apiextensionsv1.WebhookConverter))

	createWhenServed(t, ctx, dyn, crontab("stored-v1", "* * * * *"))
	v2 := crontabsV1
	v2.Version = "v2"
	_, err := dyn.Resource(v2).Namespace("default").Get(ctx, "stored-v1", metav1.GetOptions{})
	if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "minicp calls no conversion webhooks") {
		t.Fatalf("GET at v2 of a v1 object: %v, want a 500 Status saying minicp calls no conversion webhooks", err)
	}
	obj := crontab("via-v2", "* * * * *")
	obj.SetAPIVersion("stable.example.com/v2")
	if _, err := dyn.Resource(v2).Namespace("default").Create(ctx, obj, metav1.CreateOptions{}); !apierrors.IsInternalError(err) {
		t.Fatalf("create at v2: %v, want the same Status", err)
	}
}

// Custom resources have no protobuf form: a protobuf body is 415, an
// Accept of protobuf alone 406, protobuf-or-JSON gets JSON.
func TestCustomResourcesAreServedAsJSONOnly(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, time.Minute)
	dyn := dynamic.NewForConfigOrDie(s.RESTConfig)
	installCRD(t, ctx, clientset.NewForConfigOrDie(s.RESTConfig), crontabCRD())
	createWhenServed(t, ctx, dyn, crontab("tab", "* * * * *"))

	url := s.URL + "/apis/stable.example.com/v1/namespaces/default/crontabs"
	do := func(method, accept, contentType, body string) (int, string, string) {
		req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
		req.Header.Set("Accept", accept)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := s.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	if code, _, body := do(http.MethodGet, "application/vnd.kubernetes.protobuf", "", ""); code != http.StatusNotAcceptable {
		t.Errorf("GET with Accept protobuf: %d %s, want 406", code, body)
	}
	if code, ct, body := do(http.MethodGet, "application/vnd.kubernetes.protobuf, application/json", "", ""); code != http.StatusOK || ct != "application/json" {
		t.Errorf("GET with Accept protobuf, json: %d %s %s, want 200 in JSON", code, ct, body)
	}
	if code, _, body := do(http.MethodPost, "application/json", "application/vnd.kubernetes.protobuf", "k8s\x00"); code != http.StatusUnsupportedMediaType {
		t.Errorf("POST in protobuf: %d %s, want 415", code, body)
	}
	_, err := dyn.Resource(crontabsV1).Namespace("default").Patch(ctx, "tab", types.StrategicMergePatchType, []byte(`{"spec":{}}`), metav1.PatchOptions{})
	if !apierrors.IsUnsupportedMediaType(err) {
		t.Errorf("strategic merge patch: %v, want 415", err)
	}
	bad := crontab("Not_A_Name", "* * * * *")
	if _, err := dyn.Resource(crontabsV1).Namespace("default").Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("create with an invalid name: %v, want 422", err)
	}
}

// A CRD is validated by apiextensions' own rules (422 with field causes),
// and a second CRD of a group whose kind is taken is not accepted.
func TestCustomResourceDefinitionsAreValidatedAndNamesAccepted(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, time.Minute)
	ext := clientset.NewForConfigOrDie(s.RESTConfig)

	bad := crontabCRD()
	bad.Name = "wrong.stable.example.com"
	bad.Spec.Versions[0].Storage = false
	_, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, bad, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("invalid CRD: %v, want 422", err)
	}
	var causes []string
	for _, c := range err.(apierrors.APIStatus).Status().Details.Causes {
		causes = append(causes, c.Field)
	}
	if got := strings.Join(causes, ","); !strings.Contains(got, "metadata.name") || !strings.Contains(got, "spec.versions") {
		t.Errorf("causes %s, want metadata.name (not <plural>.<group>) and spec.versions (no storage version)", got)
	}

	installCRD(t, ctx, ext, crontabCRD())
	clash := crontabCRD()
	clash.Name = "cronjobs.stable.example.com"
	clash.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{Plural: "cronjobs", Singular: "cronjob", Kind: "CronTab"}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, clash, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, framework.StateTimeout, "the clashing CRD to be refused its kind", func() bool {
		got, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, clash.Name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		c := apihelpers.FindCRDCondition(got, apiextensionsv1.NamesAccepted)
		// Kind and list kind both clash; the condition names the last
		// conflict found, as upstream's.
		return c != nil && c.Status == apiextensionsv1.ConditionFalse && c.Reason == "ListKindConflict" &&
			!apihelpers.IsCRDConditionTrue(got, apiextensionsv1.Established)
	})
}

// While a deleted CRD waits for its objects to go, creating one is 405,
// as upstream; once the last object's own finalizer is removed, the CRD
// goes.
func TestCreatingACustomResourceOfATerminatingCRDIsRefused(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, time.Minute)
	ext := clientset.NewForConfigOrDie(s.RESTConfig)
	dyn := dynamic.NewForConfigOrDie(s.RESTConfig)
	installCRD(t, ctx, ext, crontabCRD())
	held := crontab("held", "* * * * *")
	held.SetFinalizers([]string{"example.com/hold"})
	createWhenServed(t, ctx, dyn, held)

	if err := ext.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, "crontabs.stable.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, framework.StateTimeout, "creates to be refused while the CRD terminates", func() bool {
		_, err := dyn.Resource(crontabsV1).Namespace("default").Create(ctx, crontab("late", "* * * * *"), metav1.CreateOptions{})
		return apierrors.IsMethodNotSupported(err)
	})
	if _, err := dyn.Resource(crontabsV1).Namespace("default").Patch(ctx, "held", types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, framework.StateTimeout, "the CRD to be gone", func() bool {
		_, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "crontabs.stable.example.com", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

// A restarted stack serves the custom resources of its stored CRDs as
// soon as it is ready.
func TestCustomResourcesAreServedAfterARestart(t *testing.T) {
	dir := t.TempDir()
	first := framework.Start(t, framework.Options{DataDir: dir})
	ctx := framework.Context(t, time.Minute)
	installCRD(t, ctx, clientset.NewForConfigOrDie(first.RESTConfig), crontabCRD())
	createWhenServed(t, ctx, dynamic.NewForConfigOrDie(first.RESTConfig), crontab("survivor", "* * * * *"))
	first.Stop(t)

	second := framework.Start(t, framework.Options{DataDir: dir})
	got, err := dynamic.NewForConfigOrDie(second.RESTConfig).Resource(crontabsV1).Namespace("default").Get(ctx, "survivor", metav1.GetOptions{})
	if err != nil || got.GetName() != "survivor" {
		t.Fatalf("GET right after the restart: %v", err)
	}
}
