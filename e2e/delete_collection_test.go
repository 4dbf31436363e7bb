package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/e2e/framework"
)

// DELETE on a collection (client-go's DeleteCollection): only what the
// selector matches is deleted, the answer lists it, a dry run deletes
// nothing and writes nothing, and namespaces cannot be deleted that way.
func TestDeleteCollectionDeletesWhatTheSelectorMatches(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, time.Minute)
	cms := s.Clientset.CoreV1().ConfigMaps("default")
	for i := range 6 {
		app := []string{"a", "b"}[i%2]
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Labels: map[string]string{"app": app}}}
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	names := func() []string {
		list, err := cms.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, cm := range list.Items {
			out = append(out, cm.Name)
		}
		return out
	}
	before := currentRevision(t, s)
	if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}, metav1.ListOptions{LabelSelector: "app=a"}); err != nil {
		t.Fatalf("dry-run DeleteCollection: %v", err)
	}
	if got, now := names(), currentRevision(t, s); len(got) != 6 || now != before {
		t.Fatalf("after a dry run: %v at revision %d (was %d); want all 6 and no write", got, now, before)
	}

	// The raw answer: the list of what was deleted.
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.RESTConfig.Host+"/api/v1/namespaces/default/configmaps?labelSelector=app%3Da", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var deleted corev1.ConfigMapList
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &deleted) != nil || deleted.Kind != "ConfigMapList" || len(deleted.Items) != 3 {
		t.Fatalf("DELETE of the collection: %d %s; want 200 and a ConfigMapList of the 3 deleted", resp.StatusCode, body)
	}
	if got := strings.Join(names(), ","); got != "cm-1,cm-3,cm-5" {
		t.Fatalf("left after deleting app=a: %s, want cm-1,cm-3,cm-5", got)
	}
	if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatalf("DeleteCollection of the rest: %v", err)
	}
	if got := names(); len(got) != 0 {
		t.Fatalf("left after deleting everything: %v", got)
	}

	// Not across all namespaces: upstream serves only GET there.
	err = s.Clientset.CoreV1().RESTClient().Delete().AbsPath("/api/v1/configmaps").Do(ctx).Error()
	if !apierrors.IsMethodNotSupported(err) {
		t.Fatalf("DELETE of config maps across all namespaces: %v; want 405 MethodNotAllowed", err)
	}
	// client-go has no DeleteCollection for namespaces either.
	err = s.Clientset.CoreV1().RESTClient().Delete().AbsPath("/api/v1/namespaces").Do(ctx).Error()
	if !apierrors.IsMethodNotSupported(err) {
		t.Fatalf("DELETE of the namespaces collection: %v; want 405 MethodNotAllowed", err)
	}
	if _, err := s.Clientset.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("namespace default after the refused DELETE: %v", err)
	}
}
