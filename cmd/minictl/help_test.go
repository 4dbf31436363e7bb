package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// deadURL is a loopback URL nothing listens on: a port that was just free.
func deadURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	return url
}

// writeKubeconfig writes a kubeconfig pointing at server.
func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c"}
	cfg.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// commandPaths lists every command under cmd as the words that call it.
func commandPaths(cmd *cobra.Command, prefix []string) [][]string {
	var paths [][]string
	for _, c := range cmd.Commands() {
		if c.Name() == "help" {
			continue
		}
		path := append(append([]string(nil), prefix...), c.Name())
		paths = append(paths, path)
		paths = append(paths, commandPaths(c, path)...)
	}
	return paths
}

// -h and --help, wherever they stand, print the command's help and do
// nothing: with etcd and the apiserver unreachable, any command that acted
// would fail, and snapshot save would write its file.
func TestHelpOnEveryCommandPrintsItsHelpAndDoesNothing(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "snap.db")
	globals := []string{"--etcd-endpoints", deadURL(t), "--data-dir", dir, "--kubeconfig", writeKubeconfig(t, deadURL(t))}
	// Arguments each command takes, so that help is asked of a whole command line.
	argsOf := map[string][]string{
		"etcd get": {"/registry/", "--prefix"}, "etcd move-leader": {"minicp-etcd-1"}, "etcd compact": {"--keep", "0"},
		"snapshot save": {snap}, "snapshot restore": {snap, "--data-dir", filepath.Join(dir, "restored")},
		"fault add": {"etcd.range", "--delay", "1s"}, "fault clear": {"etcd.range"}, "fault stop-member": {"m"}, "fault restart-member": {"m"},
		"relist": {"--compact"},
	}
	paths := commandPaths(newRootCommand(&bytes.Buffer{}, &bytes.Buffer{}), nil)
	if len(paths) < 15 {
		t.Fatalf("found %d commands, want every command of minictl: %v", len(paths), paths)
	}
	for _, path := range append(paths, []string{}) {
		name := strings.Join(path, " ")
		for _, help := range []string{"--help", "-h"} {
			for _, args := range [][]string{
				append(append(append([]string{}, path...), argsOf[name]...), help),
				append(append([]string{help}, path...), argsOf[name]...),
				append(append(append([]string{}, path...), help), argsOf[name]...),
			} {
				args = append(args, globals...)
				var out bytes.Buffer
				start := time.Now()
				if err := run(context.Background(), args, &out); err != nil {
					t.Errorf("minictl %s: got %v, want help and no error", strings.Join(args, " "), err)
					continue
				}
				want := "Usage:\n  minictl " + name
				if !strings.Contains(out.String(), want) {
					t.Errorf("minictl %s: output does not contain %q:\n%s", strings.Join(args, " "), want, out.String())
				}
				if d := time.Since(start); d > time.Second {
					t.Errorf("minictl %s took %s: help must not wait for anything", strings.Join(args, " "), d)
				}
			}
		}
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("help wrote into the data directory: %v %v", entries, err)
	}
}

// With nothing listening, every command says so at once, naming what it
// tried, where that came from, and the fix.
func TestNothingAnsweringIsSaidWithinTwoSeconds(t *testing.T) {
	etcd, api := deadURL(t), deadURL(t)
	dir := t.TempDir()
	kubeconfig := writeKubeconfig(t, api)
	cases := [][]string{
		{"etcd", "status"}, {"etcd", "get", "/registry/"}, {"etcd", "move-leader", "m"}, {"etcd", "compact", "--keep", "0"},
		{"etcd", "defrag"}, {"etcd", "alarm", "list"}, {"etcd", "alarm", "disarm"}, {"lease", "ls"},
		{"snapshot", "save", filepath.Join(dir, "snap.db")},
		{"relist", "--kubeconfig", kubeconfig}, {"informer", "--kubeconfig", kubeconfig},
		{"fault", "ls", "--server", api},
	}
	for _, args := range cases {
		args = append(args, "--etcd-endpoints", etcd, "--data-dir", dir)
		start := time.Now()
		err := run(context.Background(), args, &bytes.Buffer{})
		took := time.Since(start)
		if err == nil || !strings.Contains(err.Error(), "is minicp running on data directory "+dir) {
			t.Errorf("minictl %s: got %v, want it to ask whether minicp is running", strings.Join(args, " "), err)
			continue
		}
		if !strings.Contains(err.Error(), etcd) && !strings.Contains(err.Error(), api) {
			t.Errorf("minictl %s: %v does not name the address it tried", strings.Join(args, " "), err)
		}
		if took > 2*time.Second {
			t.Errorf("minictl %s took %s to say nothing answers, want under 2s", strings.Join(args, " "), took)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "snap.db")); !os.IsNotExist(err) {
		t.Errorf("snapshot save with etcd down left a file: %v", err)
	}
}

// Without a data directory or endpoints, minictl says where it looked.
func TestNoDataDirectoryNamesTheFileItLookedFor(t *testing.T) {
	dir := t.TempDir()
	err := run(context.Background(), []string{"etcd", "status", "--data-dir", dir}, &bytes.Buffer{})
	// Something may listen on etcd's default port on this machine; only
	// the message for nothing answering is checked.
	if err != nil && !strings.Contains(err.Error(), "there is no "+filepath.Join(dir, "etcd-endpoints")) {
		t.Errorf("got %v, want it to name the endpoints file it looked for", err)
	}
}

func TestUnknownCommandIsAnError(t *testing.T) {
	for _, args := range [][]string{{"etcd", "frobnicate"}, {"frobnicate"}} {
		err := run(context.Background(), args, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "unknown command") {
			t.Errorf("minictl %v: got %v, want an unknown command error", args, err)
		}
	}
}
