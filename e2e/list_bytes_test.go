package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/e2e/framework"
)

// TestListsFromTheCacheHaveTheBytesOfListsFromEtcd lists pods from the
// watch cache (RV=0 and RV="": the cache's items written around their kept
// encodings) and from etcd (resourceVersionMatch=Exact at the same
// revision: a typed list decoded from etcd and encoded whole), in JSON and
// protobuf, and requires the same bytes. A second LIST after one pod
// changed must show the change: an item's kept encoding is never stale.
func TestListsFromTheCacheHaveTheBytesOfListsFromEtcd(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, time.Minute)
	pods := s.Clientset.CoreV1().Pods("default")
	for i := range 20 {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bytes-%02d", i), Labels: map[string]string{"app": "web", "i": fmt.Sprint(i)},
				Annotations: map[string]string{"note": `<"quoted"> & ünïcode`}},
			Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", i%3), Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
		}
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	get := func(query, accept string) []byte {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.RESTConfig.Host+"/api/v1/namespaces/default/pods?"+query, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", accept)
		resp, err := s.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET ?%s (%s): %d %v %s", query, accept, resp.StatusCode, err, body)
		}
		return body
	}
	compare := func(round string) {
		t.Helper()
		// The consistent list names the revision; RV=0 must be at it too,
		// since nothing is written in between.
		var consistent struct {
			Metadata metav1.ListMeta `json:"metadata"`
		}
		before := cacheStatus(t, s, "pods")
		fromCache := get("resourceVersion=", "application/json")
		if err := json.Unmarshal(fromCache, &consistent); err != nil {
			t.Fatal(err)
		}
		rv := consistent.Metadata.ResourceVersion
		for _, accept := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
			fromEtcd := get("resourceVersionMatch=Exact&resourceVersion="+rv, accept)
			for _, query := range []string{"resourceVersion=", "resourceVersion=0"} {
				if got := get(query, accept); !bytes.Equal(got, fromEtcd) {
					t.Fatalf("%s: LIST ?%s in %s from the cache differs from etcd's at %s\ncache: %q\n etcd: %q", round, query, accept, rv, got, fromEtcd)
				}
			}
		}
		// All five cache LISTs above came from memory: none fell back to
		// etcd, which would compare etcd's bytes with etcd's.
		after := cacheStatus(t, s, "pods")
		if before.CacheState == nil || after.CacheState == nil || after.ListsFromCache-before.ListsFromCache != 5 || after.ConsistentFallback != before.ConsistentFallback {
			t.Fatalf("%s: the pod cache served %d of 5 lists (%d fell back to etcd)", round,
				after.ListsFromCache-before.ListsFromCache, after.ConsistentFallback-before.ConsistentFallback)
		}
	}
	compare("first")

	pod, err := pods.Get(ctx, "bytes-07", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Labels["changed"] = "yes"
	if _, err := pods.Update(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	zero := int64(0) // bytes-03 is bound to a node: only grace 0 removes it at once
	if err := pods.Delete(ctx, "bytes-03", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	compare("after an update and a delete")
	if body := get("resourceVersion=", "application/json"); !bytes.Contains(body, []byte(`"changed":"yes"`)) || bytes.Contains(body, []byte(`"bytes-03"`)) {
		t.Fatalf("the list after the writes does not show them: %s", body)
	}
}
