package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/e2e/framework"
	"minicp/embedetcd"
)

// runOK runs minictl with args and fails the test on an error.
func runOK(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	if err := run(ctx, args, &out); err != nil {
		t.Fatalf("minictl %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

func wantLines(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output does not contain %q:\n%s", w, out)
		}
	}
}

// M17: compact, defrag and alarm list through minictl,
// and a compaction to the future refused with nothing changed.
func TestEtcdCompactDefragAndAlarmList(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cms := s.Clientset.CoreV1().ConfigMaps("default")
	var last *corev1.ConfigMap
	for i := range 20 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"v": fmt.Sprint(i, strings.Repeat("x", 10<<10))}}
		var err error
		if i == 0 {
			last, err = cms.Create(ctx, cm, metav1.CreateOptions{})
		} else {
			cm.ResourceVersion = last.ResourceVersion
			last, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	ep := "--endpoints=" + strings.Join(s.ControlPlane.EtcdEndpoints(), ",")

	// --help acts on nothing: the status below still says "compacted 0".
	wantLines(t, runOK(t, ctx, ep, "etcd", "compact", "--keep", "0", "--help"), "Usage:\n  minictl etcd compact")
	wantLines(t, runOK(t, ctx, "etcd", "defrag", ep, "-h"), "Usage:\n  minictl etcd defrag")

	var out bytes.Buffer
	err := run(ctx, []string{ep, "etcd", "compact", "999999"}, &out)
	if err == nil || !strings.Contains(err.Error(), "cannot compact to revision 999999: revision is in the future") {
		t.Fatalf("compact to the future: got %v, want a refusal", err)
	}
	wantLines(t, runOK(t, ctx, ep, "etcd", "status"), "compacted:      0 ")

	current := last.ResourceVersion
	out2 := runOK(t, ctx, ep, "etcd", "compact", "--keep", "0")
	wantLines(t, out2, fmt.Sprintf("compacted etcd to revision %s (was 0; current revision %s)", current, current),
		"run `minictl etcd defrag`")
	wantLines(t, runOK(t, ctx, ep, "etcd", "status"), "compacted:      "+current+" ")
	wantLines(t, runOK(t, ctx, ep, "etcd", "defrag"), "db size", " -> ")
	wantLines(t, runOK(t, ctx, ep, "etcd", "alarm", "list"), "no alarms")
	wantLines(t, runOK(t, ctx, ep, "etcd", "alarm", "disarm"), "no alarms to disarm")

	for _, args := range [][]string{{"etcd", "compact"}, {"etcd", "compact", "5", "--keep", "1"}, {"etcd", "compact", "five"}, {"etcd", "alarm", "raise"}} {
		if err := run(ctx, append([]string{ep}, args...), &out); err == nil {
			t.Errorf("minictl %s: got no error", strings.Join(args, " "))
		}
	}
}

// M16: save from the running cluster, restore into a new
// minicp data directory; a corrupt file or a used directory is refused.
func TestSnapshotSaveAndRestore(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ep := "--endpoints=" + s.ControlPlane.EtcdEndpoints()[0]
	file := filepath.Join(t.TempDir(), "snap.db")
	out := runOK(t, ctx, ep, "snapshot", "save", file)
	info, err := embedetcd.ReadSnapshotInfo(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, out, fmt.Sprintf("at revision %d to %s", info.Revision, file))

	dir := filepath.Join(t.TempDir(), "restored")
	out = runOK(t, ctx, "snapshot", "restore", file, "--data-dir", dir, "--bump-revision", "1000", "--mark-compacted")
	wantLines(t, out, fmt.Sprintf("etcd will start at revision %d (%d + 1000), compacted there", info.Revision+1000, info.Revision),
		"start minicp on it: go run ./cmd/minicp --data-dir "+dir)

	var buf bytes.Buffer
	if err := run(ctx, []string{"snapshot", "restore", file, "--data-dir", dir}, &buf); err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Errorf("restoring into a used directory: got %v, want a refusal", err)
	}
	if err := os.WriteFile(file, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other")
	if err := run(ctx, []string{"snapshot", "restore", "--data-dir", other, file}, &buf); err == nil || !strings.Contains(err.Error(), "is not an etcd snapshot") {
		t.Errorf("restoring garbage: got %v, want a refusal", err)
	}
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Errorf("the refused restore created %s", other)
	}
}
