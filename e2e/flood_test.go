package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"minicp/e2e/framework"
	"minicp/internal/datadir"
)

// No number of client connections makes minicp exit. minicp runs as a
// child process with an open-files limit of 256; 600 clients connect and
// stay. The apiserver accepts only as many as its cap, leaving etcd its
// descriptors: writes on a connection opened before the flood keep
// succeeding, the process never runs out of descriptors, and once the
// flood leaves new clients are served.
func TestAConnectionFloodLeavesEtcdItsDescriptors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds minicp and floods it")
	}
	const fdLimit, flood, minFree = 256, 600, 32
	bin, dir := buildMinicp(t), t.TempDir()
	ctx := framework.Context(t, 3*time.Minute)
	cmd := exec.CommandContext(ctx, "sh", "-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, fdLimit), bin,
		"--data-dir", dir, "--port", "0", "--etcd-client-port", "0", "--etcd-peer-port", "0",
		"--unsafe-no-fsync", "--simulated-nodes", "0")
	logFile, err := os.Create(filepath.Join(t.TempDir(), "minicp.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logFile
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1) // the process's end, written once by the waiting goroutine
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	})
	host := ""
	for scanner := bufio.NewScanner(out); scanner.Scan() && host == ""; {
		if url, ok := strings.CutPrefix(strings.TrimSpace(scanner.Text()), "apiserver: "); ok {
			host = strings.TrimPrefix(url, "https://")
		}
	}
	if host == "" {
		t.Fatal("minicp did not print its apiserver URL")
	}
	token, err := os.ReadFile(filepath.Join(dir, datadir.TokenFile))
	if err != nil {
		t.Fatal(err)
	}
	// One client connection, opened before the flood and kept alive.
	kept := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}}
	write := func(name string) error {
		req, _ := http.NewRequest("POST", "http://"+host+"/api/v1/namespaces/default/configmaps",
			strings.NewReader(fmt.Sprintf(`{"metadata":{"name":%q},"data":{"k":%q}}`, name, strings.Repeat("x", 4096))))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		resp, err := kept.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body) // read to the end, so the connection is kept
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("POST %s: %s", name, resp.Status)
		}
		return nil
	}
	if err := write("before"); err != nil {
		t.Fatal(err)
	}
	base := openFiles(t, cmd.Process.Pid)

	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range flood {
		c, err := net.DialTimeout("tcp", host, 2*time.Second)
		if err != nil {
			break // the kernel's accept queue is full: the flood is as big as it gets
		}
		fmt.Fprintf(c, "GET /version HTTP/1.1\r\nHost: %s\r\n\r\n", host)
		conns = append(conns, c)
	}
	t.Logf("%d connections open; minicp had %d descriptors open before", len(conns), base)
	framework.Eventually(t, framework.StateTimeout, "minicp to accept connections up to its cap", func() bool {
		return openFiles(t, cmd.Process.Pid) >= base+64
	})
	for i := range 30 {
		if err := write(fmt.Sprintf("during-%d", i)); err != nil {
			t.Fatalf("a write during the flood: %v", err)
		}
		if open := openFiles(t, cmd.Process.Pid); fdLimit-open < minFree {
			t.Fatalf("%d of %d descriptors open during the flood: fewer than %d left for etcd", open, fdLimit, minFree)
		}
	}
	select {
	case err := <-exited:
		t.Fatalf("minicp exited during the flood: %v", err)
	default:
	}

	for _, c := range conns {
		c.Close()
	}
	conns = nil
	fresh := &http.Client{Timeout: 5 * time.Second}
	framework.Eventually(t, framework.StateTimeout, "a new client served after the flood", func() bool {
		resp, err := fresh.Get("http://" + host + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	if log, _ := os.ReadFile(logFile.Name()); strings.Contains(string(log), "too many open files") {
		t.Errorf("minicp ran out of descriptors:\n%s", log)
	}
}

// openFiles counts the descriptors process pid has open.
func openFiles(t *testing.T, pid int) int {
	t.Helper()
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Skipf("cannot count open descriptors here: %v", err)
	}
	return len(entries)
}
