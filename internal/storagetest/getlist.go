package storagetest

import (
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"minicp/registry"
)

var getListCases = []testCase{
	{"GetReturnsTheObjectAtItsModRevisionByEveryResourceVersionRule", testGet},
	{"GetOfAMissingObjectIsNotFound", testGetMissing},
	{"ListWithoutResourceVersionSeesEveryAcknowledgedWriteOfAnyResource", testListConsistent},
	{"ListAtZeroServesSomeStateWithoutWaiting", testListZero},
	{"ListNotOlderThanAWriteIncludesIt", testListNotOlderThan},
	{"ReadsAtAFutureResourceVersionAre504TooLargeWithRetryAfter", testFutureResourceVersion},
	{"ListExactReadsThePastUntilCompactedThen410", testListExact},
	{"ListPagesAreOneSnapshotAtTheFirstPagesRevision", testListPages},
	{"ListAtZeroWithALimitReturnsAPageOrEverything", testListZeroWithLimit},
	{"ListSelectsByLabelNameNodeAndNamespace", testListSelectors},
	{"ListRefusesFieldsThatAreNotSelectable", testListBadField},
	{"StaleUpdateIsAConflict", testConflict},
	{"SecondCreateOfANameIsAlreadyExists", testAlreadyExists},
	{"DeleteReturnsTheLastStateAtTheDeletionsRevision", testDelete},
}

// M4: resourceVersion is the mod revision, whichever way
// the object is read.
func testGet(t *testing.T, s *suite) {
	created := s.createPod("a")
	for _, version := range []string{"", created.ResourceVersion} {
		out, err := s.Storage.Get(s.ctx, s.pods, ns, "a", registry.GetOptions{ResourceVersion: version})
		if err != nil {
			t.Fatalf("get at %q: %v", version, err)
		}
		if got := out.(*corev1.Pod).ResourceVersion; got != created.ResourceVersion {
			t.Errorf("get at %q: resourceVersion %s, want %s", version, got, created.ResourceVersion)
		}
	}
	s.eventually("GET resourceVersion=0 to return the pod", func() bool {
		out, err := s.Storage.Get(s.ctx, s.pods, ns, "a", registry.GetOptions{ResourceVersion: "0"})
		return err == nil && out.(*corev1.Pod).ResourceVersion == created.ResourceVersion
	})
}

func testGetMissing(t *testing.T, s *suite) {
	for _, version := range []string{"", "0"} {
		_, err := s.Storage.Get(s.ctx, s.pods, ns, "missing", registry.GetOptions{ResourceVersion: version})
		if !apierrors.IsNotFound(err) || err.Error() != `pods "missing" not found` {
			t.Errorf("get at %q: got %v, want 404 `pods \"missing\" not found`", version, err)
		}
	}
}

// M8: a LIST without resourceVersion is a consistent read,
// from etcd or from a cache that has caught up with etcd; it is never stale,
// even when the latest write was to another resource.
func testListConsistent(t *testing.T, s *suite) {
	var last *corev1.Pod
	for _, name := range []string{"a", "b", "c"} {
		last = s.createPod(name)
		list := s.mustListPods(ns, registry.ListOptions{})
		if !strings.HasSuffix(names(list), name) {
			t.Fatalf("list after creating %s has %q: a consistent list missed an acknowledged write", name, names(list))
		}
	}
	cm, err := s.Storage.Create(s.ctx, s.configmaps, ns, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, registry.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	list := s.mustListPods(ns, registry.ListOptions{})
	if got, min := rv(t, list.ResourceVersion), rv(t, cm.(*corev1.ConfigMap).ResourceVersion); got < min {
		t.Errorf("list resourceVersion %d is older than the last write (%d, a configmap)", got, min)
	}
	if rv(t, list.ResourceVersion) <= rv(t, last.ResourceVersion) {
		t.Errorf("list resourceVersion %s not past the last pod write %s", list.ResourceVersion, last.ResourceVersion)
	}
}

func testListZero(t *testing.T, s *suite) {
	created := s.createPod("a")
	s.eventually("LIST resourceVersion=0 to include the pod", func() bool {
		list, err := s.listPods(ns, registry.ListOptions{ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		return names(list) == "a" && rv(t, list.ResourceVersion) >= rv(t, created.ResourceVersion)
	})
	if list := s.mustListPods(ns, registry.ListOptions{ResourceVersion: "0"}); rv(t, list.ResourceVersion) > s.currentRevision() {
		t.Errorf("list resourceVersion %s is newer than etcd's revision", list.ResourceVersion)
	}
}

func testListNotOlderThan(t *testing.T, s *suite) {
	s.createPod("a")
	b := s.createPod("b")
	for _, match := range []metav1.ResourceVersionMatch{"", metav1.ResourceVersionMatchNotOlderThan} {
		list := s.mustListPods(ns, registry.ListOptions{ResourceVersion: b.ResourceVersion, ResourceVersionMatch: match})
		if names(list) != "a,b" || rv(t, list.ResourceVersion) < rv(t, b.ResourceVersion) {
			t.Errorf("list not older than %s (match %q): %q at %s, want a,b at %s or later",
				b.ResourceVersion, match, names(list), list.ResourceVersion, b.ResourceVersion)
		}
	}
}

func testFutureResourceVersion(t *testing.T, s *suite) {
	future := itoa(s.currentRevision() + 1000)
	_, listErr := s.listPods(ns, registry.ListOptions{ResourceVersion: future})
	_, getErr := s.Storage.Get(s.ctx, s.pods, ns, "a", registry.GetOptions{ResourceVersion: future})
	for what, err := range map[string]error{"list": listErr, "get": getErr} {
		status, ok := err.(apierrors.APIStatus)
		if !ok {
			t.Errorf("%s at %s: got %v, want 504", what, future, err)
			continue
		}
		st := status.Status()
		if st.Code != http.StatusGatewayTimeout || !strings.HasPrefix(st.Message, "Timeout: Too large resource version: "+future) {
			t.Errorf("%s at %s: got %d %q, want 504 \"Timeout: Too large resource version: %s, current: ...\"", what, future, st.Code, st.Message, future)
		}
		if st.Details == nil || st.Details.RetryAfterSeconds != 1 || len(st.Details.Causes) != 1 ||
			st.Details.Causes[0].Type != metav1.CauseTypeResourceVersionTooLarge {
			t.Errorf("%s at %s: details %+v, want Retry-After 1 and cause ResourceVersionTooLarge", what, future, st.Details)
		}
	}
}

// M6: Exact reads the past from etcd, until compaction.
func testListExact(t *testing.T, s *suite) {
	v1 := s.createPod("a")
	v2 := s.setLabel("a", "v", "2")
	exact := registry.ListOptions{ResourceVersion: v1.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact}
	list := s.mustListPods(ns, exact)
	if list.ResourceVersion != v1.ResourceVersion || len(list.Items) != 1 || list.Items[0].ResourceVersion != v1.ResourceVersion {
		t.Fatalf("exact list at %s: list rv %s, items %v; want the pod as it was at %s", v1.ResourceVersion, list.ResourceVersion, names(list), v1.ResourceVersion)
	}
	if _, err := s.Etcd.Compact(s.ctx, rv(t, v2.ResourceVersion)); err != nil {
		t.Fatal(err)
	}
	_, err := s.listPods(ns, exact)
	if !apierrors.IsResourceExpired(err) || err.Error() != "The resourceVersion for the provided list is too old." {
		t.Errorf("exact list after compaction: got %v, want 410 Expired", err)
	}
}

func testListPages(t *testing.T, s *suite) {
	for i := range 5 {
		s.createPod(podName(i))
	}
	first := s.mustListPods(ns, registry.ListOptions{Limit: 2})
	if first.Continue == "" || first.RemainingItemCount == nil || *first.RemainingItemCount != 3 {
		t.Fatalf("first page: continue %q, remaining %v; want a token and 3 remaining", first.Continue, first.RemainingItemCount)
	}
	s.createPod("p99") // not in the snapshot the pages are read at
	got, token := names(first), first.Continue
	for token != "" {
		page := s.mustListPods(ns, registry.ListOptions{Limit: 2, Continue: token})
		if page.ResourceVersion != first.ResourceVersion {
			t.Errorf("page at %s, want the first page's %s", page.ResourceVersion, first.ResourceVersion)
		}
		got += "," + names(page)
		token = page.Continue
	}
	if got != "p00,p01,p02,p03,p04" {
		t.Errorf("pages gave %s, want p00..p04 in key order", got)
	}
}

// A limit with resourceVersion=0 may be honoured (etcd) or ignored (a watch
// cache answers everything, without a continue token), as upstream.
func testListZeroWithLimit(t *testing.T, s *suite) {
	for i := range 5 {
		s.createPod(podName(i))
	}
	s.mustListPods(ns, registry.ListOptions{}) // a consistent read: a cache is now current
	list := s.mustListPods(ns, registry.ListOptions{ResourceVersion: "0", Limit: 2})
	paged := len(list.Items) == 2 && list.Continue != ""
	whole := names(list) == "p00,p01,p02,p03,p04" && list.Continue == ""
	if !paged && !whole {
		t.Errorf("list at 0 with limit 2: %q, continue %q; want 2 items and a token, or all 5 and none", names(list), list.Continue)
	}
}

func testListSelectors(t *testing.T, s *suite) {
	s.createPodIn(ns, newPod("a", "node-1", map[string]string{"app": "web"}))
	s.createPodIn(ns, newPod("b", "node-2", map[string]string{"app": "db"}))
	s.createPodIn(ns, newPod("c", "node-1", map[string]string{"app": "db"}))
	s.createPodIn(ns2, newPod("d", "node-1", map[string]string{"app": "web"}))
	for _, tc := range []struct {
		name      string
		namespace string
		opts      registry.ListOptions
		want      string
	}{
		{"a namespace does not include a namespace it prefixes", ns, registry.ListOptions{}, "a,b,c"},
		{"all namespaces, in key order", "", registry.ListOptions{}, "a,b,c,d"},
		{"label selector", ns, registry.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{"app": "db"})}, "b,c"},
		{"node-scoped, as a kubelet lists", "", registry.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", "node-1")}, "a,c,d"},
		{"node-scoped in one namespace", ns2, registry.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", "node-1")}, "d"},
		{"node and label", ns, registry.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("spec.nodeName", "node-1"),
			LabelSelector: labels.SelectorFromSet(labels.Set{"app": "web"}),
		}, "a"},
		{"by name", ns, registry.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "b")}, "b"},
		{"by negated node", ns, registry.ListOptions{FieldSelector: fields.OneTermNotEqualSelector("spec.nodeName", "node-1")}, "b"},
	} {
		for _, version := range []string{"", "0"} {
			opts := tc.opts
			opts.ResourceVersion = version
			if got := names(s.mustListPods(tc.namespace, opts)); got != tc.want {
				t.Errorf("%s, resourceVersion %q: got %q, want %q", tc.name, version, got, tc.want)
			}
		}
	}
}

func testListBadField(t *testing.T, s *suite) {
	_, err := s.listPods(ns, registry.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.bogus", "x")})
	if !apierrors.IsBadRequest(err) || err.Error() != "field label not supported: spec.bogus" {
		t.Errorf("got %v, want 400 field label not supported: spec.bogus", err)
	}
}

// M4: writes are compare-and-swap on the mod revision,
// whatever answers reads.
func testConflict(t *testing.T, s *suite) {
	v1 := s.createPod("a")
	s.setLabel("a", "v", "2")
	_, _, err := s.Storage.Update(s.ctx, s.pods, ns, "a", registry.UpdateOptions{}, func(runtime.Object) (runtime.Object, error) {
		stale := v1.DeepCopy()
		stale.Labels["v"] = "stale"
		return stale, nil
	})
	want := `Operation cannot be fulfilled on pods "a": the object has been modified; please apply your changes to the latest version and try again`
	if !apierrors.IsConflict(err) || err.Error() != want {
		t.Errorf("stale update: got %v, want 409 %q", err, want)
	}
}

func testAlreadyExists(t *testing.T, s *suite) {
	s.createPod("a")
	_, err := s.Storage.Create(s.ctx, s.pods, ns, newPod("a", "", nil), registry.WriteOptions{})
	if !apierrors.IsAlreadyExists(err) || err.Error() != `pods "a" already exists` {
		t.Errorf("second create: got %v, want 409 AlreadyExists", err)
	}
}

func testDelete(t *testing.T, s *suite) {
	created := s.createPod("a")
	before := s.currentRevision()
	deleted := s.deletePod("a")
	if got := rv(t, deleted.ResourceVersion); got <= before || got <= rv(t, created.ResourceVersion) {
		t.Errorf("deleted object at %d, want the deletion's revision (after %d)", got, before)
	}
	if _, err := s.Storage.Get(s.ctx, s.pods, ns, "a", registry.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: got %v, want 404", err)
	}
	if list := s.mustListPods(ns, registry.ListOptions{}); len(list.Items) != 0 {
		t.Errorf("consistent list after delete: %q, want nothing", names(list))
	}
}
