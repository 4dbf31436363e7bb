package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"minicp/internal/datadir"
)

// runWithNotes runs minictl and returns what it printed as notes (on
// stderr in the binary) beside its error.
func runWithNotes(args ...string) (notes string, err error) {
	var out, errOut bytes.Buffer
	root := newRootCommand(&out, &errOut)
	root.SetArgs(args)
	err = root.ExecuteContext(context.Background())
	return errOut.String(), err
}

// A data directory that does not exist is refused before anything is
// dialled: etcd's and minicp's defaults might reach another cluster.
func TestADataDirectoryThatDoesNotExistIsRefused(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	missing := filepath.Join(t.TempDir(), "no-such-dir")
	for _, args := range [][]string{
		{"etcd", "status"}, {"etcd", "get", "/registry/"}, {"lease", "ls"},
		{"snapshot", "save", filepath.Join(t.TempDir(), "snap.db")},
		{"relist"}, {"informer"}, {"ui"}, {"fault", "ls"},
	} {
		_, err := runWithNotes(append(args, "--data-dir", missing)...)
		if err == nil || !strings.Contains(err.Error(), "the data directory "+missing+" does not exist") {
			t.Errorf("minictl %s --data-dir %s: got %v, want the missing directory refused", strings.Join(args, " "), missing, err)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("a refused data directory was created: %v", err)
	}
}

// Given an address of its own, a command does not need the data
// directory, and its error names that address's origin.
func TestAFlagNamesTheClusterWithoutADataDirectory(t *testing.T) {
	etcd := deadURL(t)
	missing := filepath.Join(t.TempDir(), "no-such-dir")
	_, err := runWithNotes("etcd", "status", "--etcd-endpoints", etcd, "--data-dir", missing)
	if err == nil || !strings.Contains(err.Error(), etcd+" (from --etcd-endpoints)") {
		t.Errorf("got %v, want nothing answering at %s from --etcd-endpoints", err, etcd)
	}
}

// $KUBECONFIG wins over --data-dir, as it does for kubectl: minictl says
// so, and when nothing answers it blames $KUBECONFIG, not the directory.
func TestKubeconfigFromTheEnvironmentSaysItOverridesTheDataDirectory(t *testing.T) {
	dir := t.TempDir()
	own := writeKubeconfig(t, deadURL(t))
	b, err := os.ReadFile(own)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(datadir.Kubeconfig(dir), b, 0o600); err != nil {
		t.Fatal(err)
	}
	api := deadURL(t)
	env := writeKubeconfig(t, api)
	t.Setenv("KUBECONFIG", env)
	notes, err := runWithNotes("informer", "--data-dir", dir)
	if !strings.Contains(notes, "using $KUBECONFIG ("+env+"), not the kubeconfig of --data-dir "+dir) {
		t.Errorf("notes %q do not say $KUBECONFIG overrides --data-dir", notes)
	}
	if err == nil || !strings.Contains(err.Error(), api) || !strings.Contains(err.Error(), "from $KUBECONFIG") ||
		strings.Contains(err.Error(), "running on data directory") {
		t.Errorf("got %v, want nothing answering at %s from $KUBECONFIG, without blaming the data directory", err, api)
	}

	// The same file through both: nothing to say.
	t.Setenv("KUBECONFIG", datadir.Kubeconfig(dir))
	if notes, _ := runWithNotes("informer", "--data-dir", dir); notes != "" {
		t.Errorf("with $KUBECONFIG naming the data directory's kubeconfig, minictl noted %q", notes)
	}
}
