package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"minicp/e2e/framework"
)

// A LIST of custom resources from the watch cache is written around each
// item's kept encoding, as a built-in kind's. Each served version has its
// own cache, whose objects carry that version's apiVersion: a LIST at v1
// and at v2 (resourceVersion=0, from memory) returns every object at the
// version asked for, with the same objects etcd returns at that version,
// the second time from the kept encodings too, and an object changed
// since then as it is now.
func TestCustomResourceListFromTheCacheIsAtTheRequestedVersion(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, time.Minute)
	dyn := dynamic.NewForConfigOrDie(s.RESTConfig)
	installCRD(t, ctx, clientset.NewForConfigOrDie(s.RESTConfig), withVersions(apiextensionsv1.NoneConverter))

	const n = 5
	for i := range n {
		obj := crontab(fmt.Sprintf("ct-%d", i), "*/5 * * * *")
		if i%2 == 1 {
			obj.SetAPIVersion("stable.example.com/v2")
		}
		createWhenServed(t, ctx, dyn, obj)
	}
	check := func(cronSpec string) {
		t.Helper()
		for _, version := range []string{"v1", "v2"} {
			path := "/apis/stable.example.com/" + version + "/namespaces/default/crontabs"
			var cached cronTabList
			framework.Eventually(t, framework.StateTimeout, version+" LIST from the cache to show every CronTab", func() bool {
				cached = getCronTabList(t, ctx, s, path+"?resourceVersion=0")
				return len(cached.Items) == n && cached.Items[n-1].Spec["cronSpec"] == cronSpec
			})
			again := getCronTabList(t, ctx, s, path+"?resourceVersion=0")
			fromEtcd := getCronTabList(t, ctx, s, path+"?resourceVersionMatch=Exact&resourceVersion="+cached.Metadata.ResourceVersion)
			want := "stable.example.com/" + version
			if cached.APIVersion != want || cached.Kind != "CronTabList" {
				t.Errorf("%s list is %s %s, want %s CronTabList", version, cached.APIVersion, cached.Kind, want)
			}
			for i, item := range cached.Items {
				if item.APIVersion != want || item.Kind != "CronTab" || item.Metadata.Name != fmt.Sprintf("ct-%d", i) {
					t.Errorf("%s item %d is %s %s %q, want %s CronTab ct-%d", version, i, item.APIVersion, item.Kind, item.Metadata.Name, want, i)
				}
			}
			if !reflect.DeepEqual(again, cached) {
				t.Errorf("%s: a second LIST from the cache differs:\n%+v\nfirst:\n%+v", version, again, cached)
			}
			if !reflect.DeepEqual(fromEtcd.Items, cached.Items) {
				t.Errorf("%s: the cache's items differ from etcd's:\n%+v\netcd:\n%+v", version, cached.Items, fromEtcd.Items)
			}
		}
	}
	check("*/5 * * * *")

	// A change replaces the object's kept encoding: both versions list it
	// as it is now.
	last, err := dyn.Resource(crontabsV1).Namespace("default").Get(ctx, fmt.Sprintf("ct-%d", n-1), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	last.Object["spec"].(map[string]any)["cronSpec"] = "0 * * * *"
	if _, err := dyn.Resource(crontabsV1).Namespace("default").Update(ctx, last, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	check("0 * * * *")
}

// cronTabList is a CronTab list as the wire carries it.
type cronTabList struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Metadata   metav1.ListMeta `json:"metadata"`
	Items      []struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   metav1.ObjectMeta `json:"metadata"`
		Spec       map[string]any    `json:"spec"`
	} `json:"items"`
}

// getCronTabList GETs path as JSON and decodes the list.
func getCronTabList(t *testing.T, ctx context.Context, s *framework.Stack, path string) cronTabList {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v: %s", path, resp.StatusCode, err, body)
	}
	var list cronTabList
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatalf("decoding %s: %v: %s", path, err, body)
	}
	return list
}
