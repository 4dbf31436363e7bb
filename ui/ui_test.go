package ui

import (
	"io"
	"io/fs"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The page is served from the binary and names no other host: nothing is
// fetched from outside minicp.
func TestThePageComesFromTheBinaryAndNamesNoOtherHost(t *testing.T) {
	mux := &prefixMux{}
	New(Config{}).Register(mux)
	srv := httptestServer(t, mux)

	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(srv + "/ui")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "/ui/" {
		t.Errorf("GET /ui: got %d to %q, want 301 to /ui/", resp.StatusCode, resp.Header.Get("Location"))
	}
	for path, wantType := range map[string]string{"/ui/": "text/html", "/ui/app.js": "javascript", "/ui/style.css": "text/css"} {
		resp, err := http.Get(srv + path)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Type"), wantType) || len(body) == 0 {
			t.Errorf("GET %s: got %d %q (%d bytes), want 200 %s", path, resp.StatusCode, resp.Header.Get("Content-Type"), len(body), wantType)
		}
	}

	// The only absolute URL allowed is SVG's namespace, which is a name,
	// not a fetch.
	absolute := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	err = fs.WalkDir(assets, "assets", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := assets.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range absolute.FindAllString(string(b), -1) {
			if m != "http://www.w3.org" {
				t.Errorf("%s names %q: the page must fetch nothing from outside minicp", path, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestViewsAreReadOnly(t *testing.T) {
	mux := &prefixMux{}
	New(Config{}).Register(mux)
	srv := httptestServer(t, mux)
	for _, path := range []string{EtcdPath, NodesPath, EventsPath, LoadPath} {
		resp, err := http.Post(srv+path, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST %s: got %d, want 405", path, resp.StatusCode)
		}
	}
}

// M6, M17: the revision axis's two ends and the
// database against its quota are etcd's own figures.
func TestEtcdViewShowsRevisionCompactionLeaderAndQuota(t *testing.T) {
	s := startStack(t)
	cli := s.cluster.Client()
	var last *clientv3.PutResponse
	for range 5 {
		var err error
		if last, err = cli.Put(s.ctx, "k", "v"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cli.Compact(s.ctx, last.Header.Revision-2, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	var view EtcdView
	if code := s.get(EtcdPath, &view); code != http.StatusOK {
		t.Fatalf("GET %s: %d", EtcdPath, code)
	}
	if !view.Embedded || view.Revision != last.Header.Revision || view.CompactedRevision != last.Header.Revision-2 {
		t.Errorf("got embedded=%t revision %d compacted %d, want embedded, %d and %d", view.Embedded, view.Revision, view.CompactedRevision, last.Header.Revision, last.Header.Revision-2)
	}
	if len(view.Members) != 1 || !view.Members[0].IsLeader || view.Leader != view.Members[0].Name || view.RaftTerm == 0 {
		t.Errorf("got members %+v leader %q term %d, want one leading member", view.Members, view.Leader, view.RaftTerm)
	}
	if view.QuotaBytes != defaultQuotaBytes || view.DBSize <= 0 || view.Alarms == nil || len(view.Alarms) != 0 {
		t.Errorf("got quota %d, db %d, alarms %v; want etcd's 2 GiB default, a size and no alarm", view.QuotaBytes, view.DBSize, view.Alarms)
	}
	if view.LeaseCheckpoint == nil || view.LeaseCheckpoint.Enabled {
		t.Errorf("lease checkpoint: got %+v, want reported off (etcd's default)", view.LeaseCheckpoint)
	}

	// With --etcd-servers the same figures come through the client.
	external := New(Config{EtcdClient: cli})
	ext, err := external.EtcdStatus(s.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ext.Embedded || ext.Revision != view.Revision || ext.CompactedRevision != view.CompactedRevision || ext.Leader != view.Leader || ext.QuotaBytes != 0 || ext.LeaseCheckpoint != nil {
		t.Errorf("through the client: got %+v, want the same revisions and leader, quota and checkpointing unknown", ext)
	}
}

// M11, M12: each node's Ready condition, time since its
// last renewal, and the TTL of the etcd lease its Lease key is bound to;
// every node counted, one page detailed.
func TestNodesViewCountsEveryNodeAndDetailsOnePage(t *testing.T) {
	s := startStack(t)
	for i := range 60 {
		s.node(nodeName(i), corev1.ConditionTrue, time.Duration(i%10)*time.Second)
	}
	s.node(nodeName(60), corev1.ConditionUnknown, 70*time.Second)
	s.node(nodeName(61), corev1.ConditionFalse, -1) // no Lease
	s.waitCached()

	var v NodesView
	if code := s.get(NodesPath, &v); code != http.StatusOK {
		t.Fatalf("GET %s: %d", NodesPath, code)
	}
	if v.Total != 62 || v.Ready["True"] != 60 || v.Ready["Unknown"] != 1 || v.Ready["False"] != 1 || v.NoLease != 1 {
		t.Errorf("got total %d ready %v noLease %d, want 62, 60/1/1 and 1", v.Total, v.Ready, v.NoLease)
	}
	if v.Pages != 2 || len(v.Nodes) != defaultPageSize || v.Nodes[0].Name != nodeName(0) || !v.ControllerRunning || v.GracePeriodSeconds != 50 {
		t.Fatalf("got %d pages, %d rows from %s, controller %t grace %v; want 2 pages of 50 from %s, grace 50", v.Pages, len(v.Nodes), v.Nodes[0].Name, v.ControllerRunning, v.GracePeriodSeconds, nodeName(0))
	}
	if got := v.Ages.Counts; got[0] != 30 || got[1] != 30 || got[ageBuckets] != 1 || v.Ages.BucketSeconds != 5 {
		t.Errorf("renewal ages: got %v per %vs, want 30 in each of the first two 5 s buckets and 1 past the grace period", got, v.Ages.BucketSeconds)
	}
	first := v.Nodes[3]
	if first.Ready != "True" || first.SecondsSinceRenewal != 3 || first.LeaseDurationSeconds != 40 {
		t.Errorf("%s: got %+v, want Ready, renewed 3 s ago, duration 40", first.Name, first)
	}
	if first.EtcdLease == nil || first.EtcdLease.GrantedTTL != 40 || first.EtcdLease.TTL <= 0 || first.EtcdLease.TTL > 40 {
		t.Errorf("%s: etcd lease %+v, want granted 40 s with 0 < TTL <= 40", first.Name, first.EtcdLease)
	}

	var silent NodesView
	s.get(NodesPath+"?sort=renewal&pageSize=2", &silent)
	if len(silent.Nodes) != 2 || silent.Nodes[0].Name != nodeName(60) || silent.Pages != 31 {
		t.Errorf("longest silent first: got %+v in %d pages, want %s first in 31 pages", silent.Nodes, silent.Pages, nodeName(60))
	}
	var unknown NodesView
	s.get(NodesPath+"?ready=Unknown", &unknown)
	if unknown.Matching != 1 || unknown.Total != 62 || unknown.Nodes[0].Name != nodeName(60) {
		t.Errorf("ready=Unknown: got %d matching of %d, want %s alone of 62", unknown.Matching, unknown.Total, nodeName(60))
	}
	var last NodesView
	s.get(NodesPath+"?page=1", &last)
	if len(last.Nodes) != 12 || last.Nodes[11].Name != nodeName(61) || last.Nodes[11].EtcdLease != nil || last.Nodes[11].SecondsSinceRenewal != -1 {
		t.Errorf("page 2: got %d rows, last %+v; want 12 rows ending with %s, without a Lease", len(last.Nodes), last.Nodes[len(last.Nodes)-1], nodeName(61))
	}
	var status metav1.Status
	for _, bad := range []string{"?page=x", "?pageSize=0", "?pageSize=1000", "?ready=Maybe", "?sort=age"} {
		if code := s.get(NodesPath+bad, &status); code != http.StatusBadRequest || status.Reason != metav1.StatusReasonBadRequest || status.Message == "" {
			t.Errorf("GET %s%s: got %d %+v, want 400 BadRequest with a message", NodesPath, bad, code, status)
		}
	}
}

// The tape is the cache's windows, newest first.
func TestEventsViewIsTheNewestWindowEvents(t *testing.T) {
	s := startStack(t)
	for i := range 3 {
		s.node(nodeName(i), corev1.ConditionTrue, 0)
	}
	s.waitCached()
	var v EventsView
	if code := s.get(EventsPath+"?limit=4", &v); code != http.StatusOK {
		t.Fatalf("GET %s: %d", EventsPath, code)
	}
	if len(v.Events) != 4 || v.Events[0].Name != nodeName(2) || v.Events[0].Resource != "leases.coordination.k8s.io" || v.Events[0].Type != "ADDED" {
		t.Fatalf("got %+v, want 4 events, the newest the Lease of %s", v.Events, nodeName(2))
	}
	for i := 1; i < len(v.Events); i++ {
		if v.Events[i].ResourceVersion >= v.Events[i-1].ResourceVersion {
			t.Errorf("event %d at %d after %d: want newest first", i, v.Events[i].ResourceVersion, v.Events[i-1].ResourceVersion)
		}
	}
	if code := s.get(EventsPath+"?limit=0", nil); code != http.StatusBadRequest {
		t.Errorf("limit=0: got %d, want 400", code)
	}
}

// A failing etcd is a 503 Status that says what failed, not an empty answer.
func TestAnUnreachableEtcdIsA503WithAMessage(t *testing.T) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"http://127.0.0.1:1"}, DialTimeout: 200 * time.Millisecond, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cli.Close(); err != nil {
			t.Logf("closing a client that never connected: %v", err)
		}
	})
	mux := &prefixMux{}
	New(Config{EtcdClient: cli}).Register(mux)
	srv := httptestServer(t, mux)
	resp, err := http.Get(srv + EtcdPath)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "etcd did not report its status") {
		t.Errorf("got %d %s, want 503 naming etcd", resp.StatusCode, body)
	}
}

func TestNodesAreOrderedAsPeopleCount(t *testing.T) {
	names := []string{"node-10", "node-2", "node-1", "node-02", "node-100", "a", "node-b", "node-", "node-9x"}
	rows := make([]NodeRow, len(names))
	for i, n := range names {
		rows[i].Name = n
	}
	sortRows(rows, "name")
	var got []string
	for _, r := range rows {
		got = append(got, r.Name)
	}
	want := []string{"a", "node-", "node-1", "node-02", "node-2", "node-9x", "node-10", "node-100", "node-b"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %v, want %v", got, want)
	}
}
