package discovery

import (
	"encoding/json"
	"minicp/internal/testsupport"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"minicp/internal/kubeversion"
)

func newDiscoveryServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(newDiscoveryHandler(testResources.All(), testReviews))
	t.Cleanup(srv.Close)
	return srv
}

func TestClientGoDiscoversEveryResourceThroughAggregatedDiscovery(t *testing.T) {
	srv := newDiscoveryServer(t)
	client, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	checkDiscoveredResources(t, client)
}

func TestClientGoDiscoversEveryResourceThroughLegacyDiscovery(t *testing.T) {
	srv := newDiscoveryServer(t)
	client, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	client.UseLegacyDiscovery = true
	checkDiscoveredResources(t, client)
}

func checkDiscoveredResources(t *testing.T, client *discovery.DiscoveryClient) {
	t.Helper()
	groups, lists, err := client.ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("ServerGroupsAndResources: %v", err)
	}
	var groupNames []string
	for _, g := range groups {
		groupNames = append(groupNames, g.Name)
	}
	// The table's groups, then the review APIs the server serves itself.
	if want := append(servedGroups(), "authentication.k8s.io", "authorization.k8s.io"); !slices.Equal(groupNames, want) {
		t.Errorf("groups: got %q, want %q", groupNames, want)
	}
	found := map[string]metav1.APIResource{}
	for _, list := range lists {
		for _, r := range list.APIResources {
			found[list.GroupVersion+" "+r.Name] = r
		}
	}
	for _, r := range testReviews { // kubectl auth whoami and can-i find them here
		if got := found[r.Resource.GroupVersion().String()+" "+r.Resource.Resource]; got.Kind != r.Kind || !slices.Equal(got.Verbs, []string{"create"}) {
			t.Errorf("review %s: got %+v, want kind %s, verbs [create]", r.Resource, got, r.Kind)
		}
	}
	for _, r := range testResources.All() {
		got, ok := found[r.GroupVersion.String()+" "+r.Name]
		if !ok {
			t.Errorf("resource %s %s not discovered; got %v", r.GroupVersion, r.Name, found)
			continue
		}
		if got.Kind != r.Kind || got.Namespaced != r.Namespaced || got.SingularName != r.SingularName ||
			!slices.Equal(got.ShortNames, r.ShortNames) || !slices.Equal(got.Verbs, resourceVerbs(r)) {
			t.Errorf("resource %s: got %+v, want kind %s namespaced %v singular %s shortNames %v verbs %v",
				r.Name, got, r.Kind, r.Namespaced, r.SingularName, r.ShortNames, resourceVerbs(r))
		}
		for _, sub := range r.Subresources {
			s, ok := found[r.GroupVersion.String()+" "+r.Name+"/"+sub]
			if !ok || !slices.Equal(s.Verbs, SubresourceVerbs(sub)) || s.Kind != r.Kind {
				t.Errorf("subresource %s/%s: got %+v (found %v), want kind %s verbs %v", r.Name, sub, s, ok, r.Kind, SubresourceVerbs(sub))
			}
		}
	}
}

func TestAggregatedDiscoveryIsServedOnlyWhenAskedFor(t *testing.T) {
	srv := newDiscoveryServer(t)
	cases := []struct {
		name, accept, wantType string
	}{
		{"client-go's header gets aggregated discovery", discovery.AcceptV2 + "," + discovery.AcceptV1, aggregatedDiscoveryContentType},
		{"the nopeer profile gets aggregated discovery", discovery.AcceptV2NoPeer + "," + discovery.AcceptV2, aggregatedDiscoveryContentType},
		{"old kubectl asking for v2beta1 falls back to legacy",
			"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json", "application/json"},
		{"no Accept header gets legacy", "", "application/json"},
		{"plain JSON gets legacy", "application/json", "application/json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var doc map[string]any
			if got := testsupport.GetDocument(t, srv, "/apis", tc.accept, &doc); got != tc.wantType {
				t.Errorf("Content-Type: got %q, want %q", got, tc.wantType)
			}
			wantKind := "APIGroupList"
			if tc.wantType == aggregatedDiscoveryContentType {
				wantKind = "APIGroupDiscoveryList"
			}
			if doc["kind"] != wantKind {
				t.Errorf("kind: got %v, want %s", doc["kind"], wantKind)
			}
		})
	}
}

func TestAggregatedCoreDiscoveryListsSubresourcesUnderTheirParent(t *testing.T) {
	srv := newDiscoveryServer(t)
	var list apidiscoveryv2.APIGroupDiscoveryList
	testsupport.GetDocument(t, srv, "/api", aggregatedDiscoveryContentType, &list)
	if len(list.Items) != 1 || list.Items[0].Name != "" || len(list.Items[0].Versions) != 1 {
		t.Fatalf("got %+v, want one core group with one version", list.Items)
	}
	v1 := list.Items[0].Versions[0]
	if v1.Version != "v1" || v1.Freshness != apidiscoveryv2.DiscoveryFreshnessCurrent {
		t.Errorf("version: got %s %s, want v1 Current", v1.Version, v1.Freshness)
	}
	for _, r := range v1.Resources {
		if r.Resource != "pods" {
			continue
		}
		if r.Scope != apidiscoveryv2.ScopeNamespace || r.ResponseKind.Kind != "Pod" || !slices.Equal(r.Categories, []string{"all"}) {
			t.Errorf("pods: got %+v", r)
		}
		if len(r.Subresources) != 1 || r.Subresources[0].Subresource != "status" {
			t.Errorf("pods subresources: got %+v, want status", r.Subresources)
		}
		return
	}
	t.Errorf("pods missing from %+v", v1.Resources)
}

func TestLegacyDiscoveryDocumentsDecodeIntoTheirTypes(t *testing.T) {
	srv := newDiscoveryServer(t)

	var versions metav1.APIVersions
	testsupport.GetDocument(t, srv, "/api", "application/json", &versions)
	host := srv.Listener.Addr().String()
	want := []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: host}}
	if !slices.Equal(versions.Versions, []string{"v1"}) || !slices.Equal(versions.ServerAddressByClientCIDRs, want) {
		t.Errorf("/api: got %+v, want versions [v1] and address %s", versions, host)
	}

	var group metav1.APIGroup
	testsupport.GetDocument(t, srv, "/apis/coordination.k8s.io", "", &group)
	if group.Name != "coordination.k8s.io" || group.PreferredVersion.GroupVersion != "coordination.k8s.io/v1" {
		t.Errorf("/apis/coordination.k8s.io: got %+v", group)
	}

	var leases metav1.APIResourceList
	testsupport.GetDocument(t, srv, "/apis/coordination.k8s.io/v1", "", &leases)
	if leases.GroupVersion != "coordination.k8s.io/v1" || len(leases.APIResources) != 1 || leases.APIResources[0].Name != "leases" {
		t.Errorf("/apis/coordination.k8s.io/v1: got %+v", leases)
	}

	var core metav1.APIResourceList
	testsupport.GetDocument(t, srv, "/api/v1", "", &core)
	for _, r := range core.APIResources {
		if r.Name == "pods" && r.StorageVersionHash != "xPOwRZ+Yhw8=" {
			t.Errorf("pods storageVersionHash: got %q, want upstream's xPOwRZ+Yhw8=", r.StorageVersionHash)
		}
	}
}

func TestDiscoveryAnswersUnknownPathsWithNotFoundStatus(t *testing.T) {
	srv := newDiscoveryServer(t)
	for _, path := range []string{"/apis/certificates.k8s.io", "/apis/certificates.k8s.io/v1", "/api/v2", "/apis/coordination.k8s.io/v2"} {
		r := testsupport.Fetch(t, srv, http.MethodGet, path, "")
		if status := r.Status(t); r.Code != http.StatusNotFound || status.Reason != metav1.StatusReasonNotFound {
			t.Errorf("GET %s: got %d %+v, want 404 NotFound Status", path, r.Code, status)
		}
	}
}

func TestDiscoveryHonoursIfNoneMatch(t *testing.T) {
	srv := newDiscoveryServer(t)
	resp, err := srv.Client().Get(srv.URL + "/api/v1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	etag := resp.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag on /api/v1")
	}
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/api/v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("If-None-Match", etag)
	resp, err = srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("got %d, want 304", resp.StatusCode)
	}
}

// /version names the Kubernetes release of the k8s.io/api module minicp
// is built with (internal/kubeversion; e2e/version_test.go checks it
// against the go command's answer and a built binary).
func TestVersionIsTheReleaseOfTheK8sAPIModuleBuiltIn(t *testing.T) {
	srv := newDiscoveryServer(t)
	var info version.Info
	testsupport.GetDocument(t, srv, "/version", "", &info)
	want := kubeversion.Get()
	if want == kubeversion.Fallback || info.GitVersion != want.GitVersion || info.Major != "1" || info.Minor != want.Minor ||
		info.GoVersion == "" || info.Platform == "" {
		t.Errorf("got %+v, want %+v with go version and platform", info, want)
	}
	client, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := client.ServerVersion(); err != nil || got.GitVersion != info.GitVersion {
		t.Errorf("client-go ServerVersion: got %v, %v", got, err)
	}
}

func TestDiscoveryRefusesWhatItCannotServeWithStatus(t *testing.T) {
	srv := newDiscoveryServer(t)
	cases := []struct {
		name, method, accept string
		wantCode             int
		wantReason           metav1.StatusReason
	}{
		{"a write is not allowed", http.MethodPost, "", http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed},
		{"protobuf alone is not acceptable", http.MethodGet, "application/vnd.kubernetes.protobuf", http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL+"/apis", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Accept", tc.accept)
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var status metav1.Status
			if err := json.NewDecoder(resp.Body).Decode(&status); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.wantCode || status.Reason != tc.wantReason || status.Kind != "Status" {
				t.Errorf("got %d %+v, want %d %s Status", resp.StatusCode, status, tc.wantCode, tc.wantReason)
			}
		})
	}
}

// testReviews are the create-only resources the apiserver lists beside
// the table: its review resources.
var testReviews = []CreateOnly{
	{Resource: authenticationv1.SchemeGroupVersion.WithResource("selfsubjectreviews"), Kind: "SelfSubjectReview", SingularName: "selfsubjectreview"},
	{Resource: authorizationv1.SchemeGroupVersion.WithResource("selfsubjectaccessreviews"), Kind: "SelfSubjectAccessReview", SingularName: "selfsubjectaccessreview"},
}

// servedGroups lists the table's API groups in discovery order.
func servedGroups() []string {
	var groups []string
	for _, r := range testResources.All() {
		if !slices.Contains(groups, r.GroupVersion.Group) {
			groups = append(groups, r.GroupVersion.Group)
		}
	}
	return groups
}
