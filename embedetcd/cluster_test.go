package embedetcd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// testConfig is a single member on free ports without fsync in a fresh
// temporary directory.
func testConfig(t testing.TB) Config {
	cfg := NewConfig()
	cfg.DataDir = t.TempDir()
	cfg.ClientPort = 0
	cfg.PeerPort = 0
	cfg.UnsafeNoFsync = true
	return cfg
}

// startCluster starts cfg and closes the cluster when the test ends.
func startCluster(t testing.TB, cfg Config) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Start(ctx, cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestSingleMemberServesTheSharedClientAndAnyOtherEtcdClient(t *testing.T) {
	c := startCluster(t, testConfig(t))
	ctx := testContext(t)

	if got := len(c.Members()); got != 1 {
		t.Fatalf("got %d members, want 1", got)
	}
	if got, want := c.Members()[0].Name(), "minicp-etcd"; got != want {
		t.Errorf("member name: got %q, want %q", got, want)
	}
	eps := c.Endpoints()
	if len(eps) != 1 || !strings.HasPrefix(eps[0], "http://127.0.0.1:") || strings.HasSuffix(eps[0], ":0") {
		t.Fatalf("endpoints: got %v, want one http://127.0.0.1:<port>", eps)
	}

	put, err := c.Client().Put(ctx, "/registry/pods/default/nginx", "v1")
	if err != nil {
		t.Fatalf("Put through Client(): %v", err)
	}
	got, err := c.Client().Get(ctx, "/registry/pods/default/nginx")
	if err != nil {
		t.Fatalf("Get through Client(): %v", err)
	}
	if len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "v1" || got.Kvs[0].ModRevision != put.Header.Revision {
		t.Fatalf("Get: got %v, want value v1 at mod revision %d", got.Kvs, put.Header.Revision)
	}

	// What etcdctl does: its own client, plain gRPC, the advertised endpoints.
	other, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("independent client: %v", err)
	}
	defer other.Close()
	got, err = other.Get(ctx, "/registry/pods/default/nginx")
	if err != nil {
		t.Fatalf("Get through an independent client: %v", err)
	}
	if len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "v1" {
		t.Fatalf("independent client Get: got %v, want value v1", got.Kvs)
	}
	status, err := other.Status(ctx, eps[0])
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if status.Leader != uint64(c.Members()[0].Server().MemberID()) {
		t.Errorf("Status leader: got %x, want the only member %x", status.Leader, c.Members()[0].Server().MemberID())
	}
}

func TestClientPortAnswersHealthOverHTTP(t *testing.T) {
	c := startCluster(t, testConfig(t))
	resp, err := http.Get(c.Endpoints()[0] + "/health")
	if err != nil {
		t.Fatalf("GET /health: %v", err)
	}
	defer resp.Body.Close()
	var h struct{ Health string }
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatalf("decoding /health: %v", err)
	}
	if resp.StatusCode != http.StatusOK || h.Health != "true" {
		t.Fatalf("GET /health: got %d %+v, want 200 health=true", resp.StatusCode, h)
	}
}

func TestRestartOnTheSameDataDirKeepsKeysAndRevisions(t *testing.T) {
	cfg := testConfig(t)
	ctx := testContext(t)

	first, err := Start(ctx, cfg)
	if err != nil {
		t.Fatalf("first Start: %v", err)
	}
	put, err := first.Client().Put(ctx, "k", "before restart")
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	if _, err := first.Client().Put(ctx, "other", "bumps the revision"); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if err := first.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	second := startCluster(t, cfg)
	got, err := second.Client().Get(ctx, "k")
	if err != nil {
		t.Fatalf("Get after restart: %v", err)
	}
	if len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "before restart" {
		t.Fatalf("Get after restart: got %v, want value %q", got.Kvs, "before restart")
	}
	if got.Kvs[0].ModRevision != put.Header.Revision {
		t.Errorf("mod revision after restart: got %d, want %d", got.Kvs[0].ModRevision, put.Header.Revision)
	}
	if got.Header.Revision != put.Header.Revision+1 {
		t.Errorf("store revision after restart: got %d, want %d", got.Header.Revision, put.Header.Revision+1)
	}
}

func TestATakenPortFailsWithAnErrorNamingTheFlag(t *testing.T) {
	for _, role := range []string{"client", "peer"} {
		t.Run(role, func(t *testing.T) {
			taken, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer taken.Close()
			port := taken.Addr().(*net.TCPAddr).Port

			cfg := testConfig(t)
			if role == "client" {
				cfg.ClientPort = port
			} else {
				cfg.PeerPort = port
			}
			c, err := Start(testContext(t), cfg)
			if err == nil {
				c.Close()
				t.Fatalf("Start on taken %s port %d succeeded, want an error", role, port)
			}
			want := fmt.Sprintf("etcd %s port %d is already in use: pass --etcd-%s-port=0 for a free port or stop the other process", role, port, role)
			if err.Error() != want {
				t.Errorf("got %q, want %q", err, want)
			}
			if !errors.Is(err, ErrPortInUse) {
				t.Errorf("errors.Is(err, ErrPortInUse) = false for %v", err)
			}
		})
	}
}

func TestAStartThatFailsAfterTheServerRanReleasesTheDataDir(t *testing.T) {
	cfg := testConfig(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // servers start, then waiting for them fails
	if c, err := Start(ctx, cfg); err == nil {
		c.Close()
		t.Fatal("Start with a cancelled context succeeded, want an error")
	}
	if dir := filepath.Join(cfg.DataDir, cfg.Name); hasWAL(dir) {
		t.Errorf("%s holds a WAL after the failed bootstrap, want no member data left", dir)
	}
	// The database lock is released and the member can start on the same directory.
	startCluster(t, cfg)
}

func TestCloseIsIdempotentAndLeavesNoGoroutines(t *testing.T) {
	cfg := testConfig(t)
	cfg.TickMs, cfg.ElectionMs = 10, 100 // elect fast: the cycles are what is tested
	cycle := func() {
		c, err := Start(testContext(t), cfg)
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
		if _, err := c.Client().Put(testContext(t), "k", "v"); err != nil {
			t.Fatalf("Put: %v", err)
		}
		for i := 0; i < 2; i++ {
			if err := c.Close(); err != nil {
				t.Fatalf("Close #%d: %v", i+1, err)
			}
		}
	}
	cycle() // the first cycle may start process-wide goroutines once
	baseline := settledGoroutines(0)
	for i := 0; i < 3; i++ {
		cycle()
	}
	// grpc and net/http end some goroutines asynchronously: allow a few
	// stragglers, but not a member's worth per cycle.
	const slack = 5
	if got := settledGoroutines(baseline + slack); got > baseline+slack {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Fatalf("goroutines after 3 more Start/Close cycles: got %d, want at most %d\n%s", got, baseline+slack, buf)
	}
}

// settledGoroutines polls for up to 5 s until at most want goroutines run
// (want 0: until the count stops changing) and returns the last count.
func settledGoroutines(want int) int {
	deadline := time.Now().Add(5 * time.Second)
	last := runtime.NumGoroutine()
	for time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // polling interval, not synchronisation
		n := runtime.NumGoroutine()
		if (want > 0 && n <= want) || (want == 0 && n == last) {
			return n
		}
		last = n
	}
	return last
}

func TestPeerURLServesEtcdsPeerAPI(t *testing.T) {
	c := startCluster(t, testConfig(t))
	m := c.Members()[0]
	if m.ClientURL() != c.Endpoints()[0] {
		t.Errorf("member client URL %q differs from endpoint %q", m.ClientURL(), c.Endpoints()[0])
	}
	if m.PeerURL() == m.ClientURL() {
		t.Errorf("peer and client URL are both %q", m.PeerURL())
	}
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(m.PeerURL(), "http://"), time.Second)
	if err != nil {
		t.Fatalf("peer URL does not accept connections: %v", err)
	}
	conn.Close()
	resp, err := http.Get(m.PeerURL() + "/members")
	if err != nil {
		t.Fatalf("GET %s/members: %v", m.PeerURL(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading /members: %v", err)
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), m.ClientURL()) {
		t.Errorf("GET /members on the peer URL: got %d %s, want 200 listing %s", resp.StatusCode, body, m.ClientURL())
	}
}

func TestThreeMembersShareOneLeaderAndEveryEndpointAnswers(t *testing.T) {
	cfg := testConfig(t)
	cfg.Members = 3
	c := startCluster(t, cfg)
	ctx := testContext(t)

	var names []string
	lead := c.Members()[0].Server().Leader()
	for _, m := range c.Members() {
		names = append(names, m.Name())
		if got := m.Server().Leader(); got != lead {
			t.Errorf("member %s follows %x, want %x", m.Name(), got, lead)
		}
	}
	if got, want := strings.Join(names, " "), "minicp-etcd-0 minicp-etcd-1 minicp-etcd-2"; got != want {
		t.Errorf("member names: got %q, want %q", got, want)
	}
	put, err := c.Client().Put(ctx, "k", "v")
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	for _, ep := range c.Endpoints() {
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, DialTimeout: 5 * time.Second})
		if err != nil {
			t.Fatalf("client for %s: %v", ep, err)
		}
		got, err := cli.Get(ctx, "k")
		cli.Close()
		if err != nil {
			t.Fatalf("Get from %s: %v", ep, err)
		}
		if len(got.Kvs) != 1 || got.Kvs[0].ModRevision != put.Header.Revision {
			t.Errorf("Get from %s: got %v, want k at mod revision %d", ep, got.Kvs, put.Header.Revision)
		}
	}
}

func TestDataThatWouldBeIgnoredIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name           string
		first, restart int
		want           string
	}{
		{"one member's data restarted as three", 1, 3, "holds a 1-member cluster (minicp-etcd), not the 3-member one asked for"},
		{"three members' data restarted as one", 3, 1, "holds a 3-member cluster (minicp-etcd-0, minicp-etcd-1, minicp-etcd-2), not the 1-member one asked for"},
		{"three members restarted on free peer ports", 3, 3, "needs the peer ports it was created with"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.Members = tc.first
			c, err := Start(testContext(t), cfg)
			if err != nil {
				t.Fatalf("first Start: %v", err)
			}
			if err := c.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			cfg.Members = tc.restart
			c, err = Start(testContext(t), cfg)
			if err == nil {
				c.Close()
				t.Fatalf("second Start succeeded, want an error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestCloseReturnsWhileConnectionsStaySilent(t *testing.T) {
	c, err := Start(testContext(t), testConfig(t))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	m := c.Members()[0]
	for _, u := range []string{m.ClientURL() + "/health", m.PeerURL() + "/members"} {
		silent, err := net.Dial("tcp", strings.TrimPrefix(u[:strings.LastIndex(u, "/")], "http://"))
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		defer silent.Close()
		// Each port accepts connections in order: once a later request is
		// answered, the silent connection has been accepted.
		resp, err := http.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		resp.Body.Close()
	}

	closed := make(chan error, 1) // receives Close's result
	go func() { closed <- c.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(sniffTimeout + 5*time.Second):
		t.Fatal("Close did not return while connections stayed silent")
	}
}

func TestCloseCutsOpenWatchesAfterTheDrainTimeout(t *testing.T) {
	c, err := Start(testContext(t), testConfig(t))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	watcher, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("watcher client: %v", err)
	}
	defer watcher.Close()
	ctx := testContext(t)
	wch := watcher.Watch(clientv3.WithRequireLeader(ctx), "k")
	if _, err := c.Client().Put(ctx, "k", "v"); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if ev := <-wch; ev.Err() != nil || len(ev.Events) != 1 {
		t.Fatalf("watch: got %+v, want one event", ev)
	}

	start := time.Now()
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if took := time.Since(start); took > grpcDrainTimeout+2*time.Second {
		t.Errorf("Close with an open watch took %s, want about the %s drain timeout", took, grpcDrainTimeout)
	}
}
