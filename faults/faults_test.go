package faults

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"minicp/registry"
)

func TestAFaultDelaysAndFailsOnlyItsPointAndResource(t *testing.T) {
	s := NewSet()
	if err := s.Add(Fault{Point: EtcdRange, Resource: "pods", Delay: Duration(50 * time.Millisecond), Error: ErrorTimeout}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := time.Now()
	err := s.BeforeEtcd(ctx, registry.EtcdRange, "pods")
	if !errors.Is(err, rpctypes.ErrTimeout) || time.Since(start) < 50*time.Millisecond {
		t.Errorf("range on pods: got %v after %v, want etcd's timeout after 50ms", err, time.Since(start))
	}
	for _, other := range []struct {
		op       registry.EtcdOp
		resource string
	}{{registry.EtcdRange, "configmaps"}, {registry.EtcdTxn, "pods"}, {registry.EtcdLease, ""}} {
		if err := s.BeforeEtcd(ctx, other.op, other.resource); err != nil {
			t.Errorf("%s on %q: got %v, want no fault", other.op, other.resource, err)
		}
	}
	if got := s.List(); len(got) != 1 || got[0].Hits != 1 {
		t.Errorf("List: got %+v, want one fault hit once", got)
	}
}

func TestAResourceFaultWinsOverAPointWideOne(t *testing.T) {
	s := NewSet()
	for _, f := range []Fault{{Point: EtcdTxn, Error: ErrorNoLeader}, {Point: EtcdTxn, Resource: "events", Error: ErrorTimeout}} {
		if err := s.Add(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.BeforeEtcd(context.Background(), registry.EtcdTxn, "events"); !errors.Is(err, rpctypes.ErrTimeout) {
		t.Errorf("events: got %v, want the events fault's timeout", err)
	}
	if err := s.BeforeEtcd(context.Background(), registry.EtcdTxn, "pods"); !errors.Is(err, rpctypes.ErrNoLeader) {
		t.Errorf("pods: got %v, want the point-wide no-leader", err)
	}
	if n := s.Clear(EtcdTxn); n != 2 || len(s.List()) != 0 {
		t.Errorf("Clear: removed %d, left %v", n, s.List())
	}
}

func TestADelayEndsWithItsRequest(t *testing.T) {
	s := NewSet()
	if err := s.Add(Fault{Point: EtcdRange, Delay: Duration(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.BeforeEtcd(ctx, registry.EtcdRange, "pods"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want the request's deadline", err)
	}
}

func TestInvalidFaultsAreRefusedWithAReason(t *testing.T) {
	cases := []struct {
		name  string
		fault Fault
		want  string
	}{
		{"an unknown point", Fault{Point: "etcd.defrag", Delay: Duration(time.Second)}, "unknown point"},
		{"neither delay nor error", Fault{Point: EtcdRange}, "needs a delay, an error, or both"},
		{"an error etcd does not give", Fault{Point: EtcdTxn, Error: "boom"}, `"timeout" or "no-leader"`},
		{"a negative delay", Fault{Point: Admission, Delay: Duration(-time.Second)}, "must not be negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := NewSet().Add(tc.fault); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestTheHTTPAPIAddsListsAndClearsFaults(t *testing.T) {
	s := NewSet()
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"point":"admission","delay":"1.5s"}`))
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST: %v %v, want 201", resp, err)
	}
	resp.Body.Close()
	resp, err = http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var list List
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(list.Faults) != 1 || list.Faults[0].Point != Admission || time.Duration(list.Faults[0].Delay) != 1500*time.Millisecond {
		t.Fatalf("GET: got %+v, want the admission fault of 1.5s", list)
	}

	resp, err = http.Post(srv.URL, "application/json", strings.NewReader(`{"point":"etcd.range","delay":"soon"}`))
	if err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad POST: %v %v, want 400", resp, err)
	}
	resp.Body.Close()

	req, _ := http.NewRequest(http.MethodDelete, srv.URL, nil)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var cleared Cleared
	if err := json.NewDecoder(resp.Body).Decode(&cleared); err != nil || cleared.Cleared != 1 || len(s.List()) != 0 {
		t.Errorf("DELETE: %+v %v, left %v; want one cleared", cleared, err, s.List())
	}
	resp.Body.Close()
}

func TestTheHTTPAPIAnswersOnlyLoopbackClients(t *testing.T) {
	req := httptest.NewRequest(http.MethodGet, "/debug/faults", nil)
	req.RemoteAddr = "192.0.2.10:40000"
	rec := httptest.NewRecorder()
	NewSet().Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), `"kind":"Status"`) {
		t.Errorf("from 192.0.2.10: got %d %s, want 403 Status", rec.Code, rec.Body)
	}
}

// fakeMembers records what it was asked to do.
type fakeMembers struct{ did []string }

func (m *fakeMembers) StopMember(name string) error {
	if name == "ghost" {
		return errors.New("no etcd member named ghost")
	}
	m.did = append(m.did, "stop "+name)
	return nil
}

func (m *fakeMembers) RestartMember(_ context.Context, name string) error {
	m.did = append(m.did, "restart "+name)
	return nil
}

func TestTheHTTPAPIStopsAndRestartsMembers(t *testing.T) {
	s := NewSet()
	members := &fakeMembers{}
	s.SetMembers(members)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	for _, path := range []string{"/debug/faults/members/minicp-etcd-1/stop", "/debug/faults/members/minicp-etcd-1/restart"} {
		resp, err := http.Post(srv.URL+path, "", nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %v %v", path, resp, err)
		}
		resp.Body.Close()
	}
	if strings.Join(members.did, ",") != "stop minicp-etcd-1,restart minicp-etcd-1" {
		t.Errorf("members were asked: %v", members.did)
	}
	resp, err := http.Post(srv.URL+"/debug/faults/members/ghost/stop", "", nil)
	if err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("stopping an unknown member: %v %v, want 400", resp, err)
	}
	resp.Body.Close()
}
