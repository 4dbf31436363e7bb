package registry

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

func listPods(t *testing.T, s *Store, opts ListOptions) (*corev1.PodList, error) {
	t.Helper()
	out, err := s.List(testContext(t), podsResource(t), "default", opts)
	if err != nil {
		return nil, err
	}
	return out.(*corev1.PodList), nil
}

func podNames(list *corev1.PodList) []string {
	var names []string
	for _, p := range list.Items {
		names = append(names, p.Name)
	}
	return names
}

// M4, M7: a list's resourceVersion is the revision of the read, not
// that of any item.
func TestListResourceVersionIsHeaderRevision(t *testing.T) {
	s, client := newTestStore(t, Options{})
	createPod(t, s, newPod("a"))
	createPod(t, s, newPod("b"))
	createNamespace(t, s, "other") // moves the revision past every pod
	list, err := listPods(t, s, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Get(testContext(t), "/registry")
	if err != nil {
		t.Fatal(err)
	}
	if got := rvOf(t, &list.ListMeta); got != resp.Header.Revision {
		t.Errorf("got list rv %d, want current revision %d", got, resp.Header.Revision)
	}
	for _, p := range list.Items {
		if rvOf(t, &p) >= rvOf(t, &list.ListMeta) {
			t.Errorf("item %s rv %s not older than the list's %s", p.Name, p.ResourceVersion, list.ResourceVersion)
		}
	}
	if got := strings.Join(podNames(list), ","); got != "a,b" {
		t.Errorf("got %s, want a,b", got)
	}
}

func TestListPagesAreReadAtTheFirstPageRevision(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	for _, name := range []string{"p1", "p2", "p3", "p4", "p5"} {
		createPod(t, s, newPod(name))
	}
	first, err := listPods(t, s, ListOptions{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(podNames(first), ","); got != "p1,p2" || first.Continue == "" {
		t.Fatalf("first page %s continue %q", got, first.Continue)
	}
	if first.RemainingItemCount == nil || *first.RemainingItemCount != 3 {
		t.Errorf("got remainingItemCount %v, want 3", first.RemainingItemCount)
	}
	raw, err := base64.RawURLEncoding.DecodeString(first.Continue)
	if err != nil {
		t.Fatal(err)
	}
	var token map[string]any
	if err := json.Unmarshal(raw, &token); err != nil {
		t.Fatal(err)
	}
	if token["v"] != "meta.k8s.io/v1" || token["rv"] != float64(rvOf(t, &first.ListMeta)) || token["start"] != "p2\x00" {
		t.Errorf("got token %v", token)
	}

	createPod(t, s, newPod("p0")) // written after the first page: not in the snapshot
	var names []string
	for list := first; list.Continue != ""; {
		if list, err = listPods(t, s, ListOptions{Limit: 2, Continue: list.Continue}); err != nil {
			t.Fatal(err)
		}
		if list.ResourceVersion != first.ResourceVersion {
			t.Errorf("page read at %s, want %s", list.ResourceVersion, first.ResourceVersion)
		}
		names = append(names, podNames(list)...)
	}
	if got := strings.Join(names, ","); got != "p3,p4,p5" {
		t.Errorf("later pages got %s, want p3,p4,p5", got)
	}
}

// M6: a continue token whose revision was compacted is 410,
// with a token to go on at the current revision.
func TestContinueAfterCompactionIsExpired(t *testing.T) {
	s, client := newTestStore(t, Options{})
	ctx := testContext(t)
	for _, name := range []string{"p1", "p2", "p3"} {
		createPod(t, s, newPod(name))
	}
	first, err := listPods(t, s, ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	createPod(t, s, newPod("p4"))
	current, err := s.currentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Compact(ctx, current, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	_, err = listPods(t, s, ListOptions{Limit: 1, Continue: first.Continue})
	if !apierrors.IsResourceExpired(err) {
		t.Fatalf("got %v, want 410 Expired", err)
	}
	status := err.(apierrors.APIStatus).Status()
	if status.Message != inconsistentContinueMsg || status.Continue == "" {
		t.Fatalf("got message %q continue %q", status.Message, status.Continue)
	}
	rest, err := listPods(t, s, ListOptions{Limit: 10, Continue: status.Continue})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(podNames(rest), ","); got != "p2,p3,p4" {
		t.Errorf("inconsistent continue got %s, want p2,p3,p4", got)
	}
}

func TestListAtExactRevisionReadsThePastUntilCompacted(t *testing.T) {
	s, client := newTestStore(t, Options{})
	ctx := testContext(t)
	a := createPod(t, s, newPod("a"))
	createPod(t, s, newPod("b"))
	list, err := listPods(t, s, ListOptions{ResourceVersion: a.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(podNames(list), ","); got != "a" || list.ResourceVersion != a.ResourceVersion {
		t.Errorf("got %s at %s, want a at %s", got, list.ResourceVersion, a.ResourceVersion)
	}
	current, err := s.currentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Compact(ctx, current); err != nil {
		t.Fatal(err)
	}
	_, err = listPods(t, s, ListOptions{ResourceVersion: a.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if !apierrors.IsResourceExpired(err) || err.Error() != listExpiredMsg {
		t.Errorf("got %v, want 410 %q", err, listExpiredMsg)
	}
}

func TestSelectiveListKeepsReadingUntilThePageIsFull(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	for i := 1; i <= 9; i++ {
		pod := newPod(fmt.Sprintf("p%d", i))
		if i%3 == 0 {
			pod.Labels["pick"] = "me"
		}
		createPod(t, s, pod)
	}
	sel := labels.SelectorFromSet(labels.Set{"pick": "me"})
	first, err := listPods(t, s, ListOptions{LabelSelector: sel, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(podNames(first), ","); got != "p3,p6" || first.Continue == "" || first.RemainingItemCount != nil {
		t.Fatalf("got %s continue %q remaining %v, want p3,p6, a token and no count", got, first.Continue, first.RemainingItemCount)
	}
	second, err := listPods(t, s, ListOptions{LabelSelector: sel, Limit: 2, Continue: first.Continue})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(podNames(second), ","); got != "p9" || second.Continue != "" {
		t.Errorf("got %s continue %q, want p9 and no token", got, second.Continue)
	}
}

func TestFieldSelectors(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	scheduled := newPod("scheduled")
	scheduled.Spec.NodeName = "node-1"
	createPod(t, s, scheduled)
	createPod(t, s, newPod("pending"))
	list, err := listPods(t, s, ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", "node-1")})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(podNames(list), ","); got != "scheduled" {
		t.Errorf("spec.nodeName=node-1 got %s", got)
	}
	list, err = listPods(t, s, ListOptions{FieldSelector: fields.ParseSelectorOrDie("status.phase=Pending,metadata.name!=scheduled")})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(podNames(list), ","); got != "pending" {
		t.Errorf("got %s, want pending", got)
	}
	_, err = listPods(t, s, ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.foo", "x")})
	if !apierrors.IsBadRequest(err) || err.Error() != "field label not supported: spec.foo" {
		t.Errorf("got %v, want 400 field label not supported: spec.foo", err)
	}
}

func TestResourceVersionNewerThanEtcdIsTooLarge(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	created := createPod(t, s, newPod("nginx"))
	future := strconv.FormatInt(rvOf(t, created)+100, 10)
	_, err := s.Get(testContext(t), podsResource(t), "default", "nginx", GetOptions{ResourceVersion: future})
	assertTooLarge(t, err, future)
	_, err = listPods(t, s, ListOptions{ResourceVersion: future})
	assertTooLarge(t, err, future)
	_, err = listPods(t, s, ListOptions{ResourceVersion: future, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	assertTooLarge(t, err, future)
	if _, err := s.Get(testContext(t), podsResource(t), "default", "nginx", GetOptions{ResourceVersion: created.ResourceVersion}); err != nil {
		t.Errorf("get not older than its own rv: %v", err)
	}
}

func assertTooLarge(t *testing.T, err error, rv string) {
	t.Helper()
	if !apierrors.IsTimeout(err) || !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		t.Fatalf("got %v, want 504 with cause ResourceVersionTooLarge", err)
	}
	status := err.(apierrors.APIStatus).Status()
	if !strings.HasPrefix(status.Message, "Timeout: Too large resource version: "+rv+", current: ") || status.Details.RetryAfterSeconds != 1 {
		t.Errorf("got message %q retry %d", status.Message, status.Details.RetryAfterSeconds)
	}
}

func TestInvalidListOptionsAreRefusedAsUpstream(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	yes := true
	cases := []struct {
		name string
		opts ListOptions
		code int32
	}{
		{"unparsable resourceVersion is 400", ListOptions{ResourceVersion: "abc"}, http.StatusBadRequest},
		{"resourceVersionMatch without resourceVersion is 422", ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchExact}, http.StatusUnprocessableEntity},
		{"exact match at 0 is 422", ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, http.StatusUnprocessableEntity},
		{"sendInitialEvents on a list is 422", ListOptions{SendInitialEvents: &yes}, http.StatusUnprocessableEntity},
		{"continue with resourceVersion is 400", ListOptions{Continue: "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6Mywic3RhcnQiOiJhIn0", ResourceVersion: "3"}, http.StatusBadRequest},
		{"garbage continue is 400", ListOptions{Continue: "!!"}, http.StatusBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := listPods(t, s, tc.opts)
			status, ok := err.(apierrors.APIStatus)
			if !ok || status.Status().Code != tc.code {
				t.Errorf("got %v, want code %d", err, tc.code)
			}
		})
	}
	_, err := s.Get(testContext(t), podsResource(t), "default", "x", GetOptions{ResourceVersion: "abc"})
	if !apierrors.IsBadRequest(err) || !strings.HasPrefix(err.Error(), "invalid resource version: ") {
		t.Errorf("get with rv abc: got %v", err)
	}
}

func TestListAcrossNamespacesDoesNotMatchNamespacePrefixes(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	createNamespace(t, s, "default2")
	createPod(t, s, newPod("a"))
	if _, err := s.Create(testContext(t), podsResource(t), "default2", newPod("b"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := listPods(t, s, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(podNames(list), ","); got != "a" {
		t.Errorf("namespace default got %s, want a", got)
	}
	all, err := s.List(testContext(t), podsResource(t), "", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(all.(*corev1.PodList).Items); n != 2 {
		t.Errorf("all namespaces got %d pods, want 2", n)
	}
}
