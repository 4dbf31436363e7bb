package crd

import (
	"bytes"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// crontabs is a namespaced CRD served at v1 (storage) and v2, with status
// and scale subresources and one printer column on v1.
func crontabs() *apiextensionsv1.CustomResourceDefinition {
	selector := ".status.selector"
	subs := &apiextensionsv1.CustomResourceSubresources{
		Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
		Scale: &apiextensionsv1.CustomResourceSubresourceScale{
			SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: &selector,
		},
	}
	names := apiextensionsv1.CustomResourceDefinitionNames{
		Plural: "crontabs", Singular: "crontab", Kind: "CronTab", ListKind: "CronTabList", ShortNames: []string{"ct"}, Categories: []string{"all"},
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "crontabs.stable.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "stable.example.com", Scope: apiextensionsv1.NamespaceScoped, Names: names,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v2", Served: true, Subresources: subs},
				{Name: "v1", Served: true, Storage: true, Subresources: subs, AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
					{Name: "Spec", Type: "string", JSONPath: ".spec.cronSpec"},
				}},
			},
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter},
		},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{AcceptedNames: names},
	}
}

func crontab(apiVersion string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": "CronTab",
		"metadata": map[string]any{"name": "tab", "namespace": "default"},
		"spec":     map[string]any{"cronSpec": "* * * * */5", "replicas": int64(2)},
		"status":   map[string]any{"replicas": int64(1), "selector": "app=tab"},
	}}
}

func TestServedResourcesComeInUpstreamsVersionPriority(t *testing.T) {
	crd := crontabs()
	beta := crd.Spec.Versions[1]
	beta.Name, beta.Storage = "v3beta1", false
	crd.Spec.Versions = append(crd.Spec.Versions, beta)
	resources, err := ServedResources(crd)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range resources {
		got = append(got, r.GroupVersion.Version)
	}
	if strings.Join(got, ",") != "v2,v1,v3beta1" {
		t.Fatalf("versions %v, want v2,v1,v3beta1 (GA by number, then betas)", got)
	}
	r := resources[1]
	if r.Prefix != "/registry/stable.example.com/crontabs" || !r.Namespaced || r.Kind != "CronTab" || r.ListKind != "CronTabList" {
		t.Fatalf("got prefix %s namespaced %v kind %s/%s", r.Prefix, r.Namespaced, r.Kind, r.ListKind)
	}
	if !r.HasSubresource("status") || !r.HasSubresource("scale") || r.Scale == nil || !r.TextOnly {
		t.Fatalf("got subresources %v, TextOnly %v", r.Subresources, r.TextOnly)
	}
}

// A v2 request reads what a v1 request stored: the same JSON, its
// apiVersion rewritten (conversion strategy None).
func TestCodecStoresTheStorageVersionAndServesTheRequestedOne(t *testing.T) {
	crd := crontabs()
	v1, _ := ResourceFor(crd, "v1")
	v2, _ := ResourceFor(crd, "v2")
	var stored bytes.Buffer
	if err := v2.StorageCodec.Encode(crontab("stable.example.com/v2"), &stored); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stored.String(), `"apiVersion":"stable.example.com/v1"`) {
		t.Fatalf("stored %s, want apiVersion stable.example.com/v1 (the storage version)", stored.String())
	}
	obj := v2.New()
	if _, _, err := v2.StorageCodec.Decode(stored.Bytes(), nil, obj); err != nil {
		t.Fatal(err)
	}
	if got := obj.(*unstructured.Unstructured).GetAPIVersion(); got != "stable.example.com/v2" {
		t.Fatalf("read at v2: apiVersion %s, want stable.example.com/v2", got)
	}
	if _, _, err := v1.StorageCodec.Decode(stored.Bytes(), nil, v1.New()); err != nil {
		t.Fatal(err)
	}
}

func TestWebhookConversionIsRefusedWithAStatus(t *testing.T) {
	crd := crontabs()
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter}
	v1, _ := ResourceFor(crd, "v1")
	v2, _ := ResourceFor(crd, "v2")
	if v1.NotCached || !v2.NotCached {
		t.Fatalf("NotCached: v1 %v, v2 %v; want the storage version cached, v2 (which needs the webhook) read from etcd", v1.NotCached, v2.NotCached)
	}
	var stored bytes.Buffer
	if err := v1.StorageCodec.Encode(crontab("stable.example.com/v1"), &stored); err != nil {
		t.Fatalf("writing at the storage version needs no conversion: %v", err)
	}
	_, _, err := v2.StorageCodec.Decode(stored.Bytes(), nil, v2.New())
	if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "no conversion webhooks") {
		t.Fatalf("got %v, want a 500 Status saying minicp calls no conversion webhooks", err)
	}
	if err := v2.StorageCodec.Encode(crontab("stable.example.com/v2"), &stored); !apierrors.IsInternalError(err) {
		t.Fatalf("writing at v2: got %v, want the same Status", err)
	}
}

func TestGenerationGrowsWithSpecNotWithStatusOrMetadata(t *testing.T) {
	res, _ := ResourceFor(crontabs(), "v1")
	st := res.Strategy
	obj := crontab("stable.example.com/v1")
	st.PrepareForCreate(obj)
	if obj.GetGeneration() != 1 {
		t.Fatalf("generation on create %d, want 1", obj.GetGeneration())
	}
	if _, ok := obj.Object["status"]; ok {
		t.Fatal("create kept status; with a status subresource it must drop it")
	}
	old := obj.DeepCopy()
	labelled := old.DeepCopy()
	labelled.SetLabels(map[string]string{"a": "b"})
	labelled.Object["status"] = map[string]any{"replicas": int64(3)}
	st.PrepareForUpdate(labelled, old)
	if labelled.GetGeneration() != 1 || labelled.Object["status"] != nil {
		t.Fatalf("metadata and status change: generation %d status %v; want 1 and the stored (none)", labelled.GetGeneration(), labelled.Object["status"])
	}
	changed := old.DeepCopy()
	_ = unstructured.SetNestedField(changed.Object, "0 * * * *", "spec", "cronSpec")
	st.PrepareForUpdate(changed, old)
	if changed.GetGeneration() != 2 {
		t.Fatalf("spec change: generation %d, want 2", changed.GetGeneration())
	}
	status := old.DeepCopy()
	_ = unstructured.SetNestedField(status.Object, "changed", "spec", "cronSpec")
	status.Object["status"] = map[string]any{"replicas": int64(4)}
	st.PrepareForStatusUpdate(status, old)
	if got, _, _ := unstructured.NestedString(status.Object, "spec", "cronSpec"); got != "* * * * */5" {
		t.Fatalf("status update changed spec to %q", got)
	}
	if got, _, _ := unstructured.NestedInt64(status.Object, "status", "replicas"); got != 4 {
		t.Fatalf("status update: status.replicas %d, want 4", got)
	}
}

func TestScaleAndPrinterReadTheDeclaredPaths(t *testing.T) {
	res, _ := ResourceFor(crontabs(), "v1")
	obj := crontab("stable.example.com/v1")
	spec, status, selector := res.Scale.Replicas(obj)
	if spec != 2 || status != 1 || selector != "app=tab" {
		t.Fatalf("scale read %d %d %q, want 2 1 app=tab", spec, status, selector)
	}
	res.Scale.SetReplicas(obj, 5)
	if got, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas"); got != 5 {
		t.Fatalf("spec.replicas %d after scaling to 5", got)
	}
	var names []string
	for _, c := range res.Printer.Columns {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "Name,Spec" {
		t.Fatalf("columns %v, want Name,Spec", names)
	}
	row, err := res.Printer.Row(obj, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(row.Cells) != 2 || row.Cells[0] != "tab" || row.Cells[1] != "* * * * */5" {
		t.Fatalf("row %v, want [tab * * * * */5]", row.Cells)
	}
	v2, _ := ResourceFor(crontabs(), "v2")
	if got := v2.Printer.Columns[len(v2.Printer.Columns)-1].Name; got != "Age" {
		t.Fatalf("a version without columns shows %s last, want Age", got)
	}
	var _ runtime.Object = obj
}
