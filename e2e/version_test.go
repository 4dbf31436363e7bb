package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/version"

	"minicp/e2e/framework"
)

// k8sAPIRelease asks the go command which k8s.io/api this module builds
// with and names its Kubernetes release: v0.37.2 -> v1.37.2.
func k8sAPIRelease(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "k8s.io/api")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m k8s.io/api: %v", err)
	}
	v := strings.TrimSpace(string(out))
	if !strings.HasPrefix(v, "v0.") {
		t.Fatalf("k8s.io/api version %q, want v0.N.P", v)
	}
	return "v1." + strings.TrimPrefix(v, "v0.")
}

// kubectl version reports, as the server's version, the Kubernetes
// release of the k8s.io modules minicp is built with, as the simulated
// kubelets do.
func TestKubectlVersionReportsTheReleaseOfTheK8sModules(t *testing.T) {
	requireKubectl(t)
	want := k8sAPIRelease(t)
	s := framework.Start(t, framework.Options{})
	out := kubectl(t, s, "version", "-o", "json")
	var got struct {
		ServerVersion version.Info `json:"serverVersion"`
	}
	// kubectl may print a version skew warning after the document.
	if err := json.NewDecoder(strings.NewReader(out)).Decode(&got); err != nil {
		t.Fatalf("kubectl version -o json: %v\n%s", err, out)
	}
	if got.ServerVersion.GitVersion != want || got.ServerVersion.Major != "1" ||
		!strings.HasPrefix(want, "v1."+got.ServerVersion.Minor+".") {
		t.Errorf("server version: got %+v, want %s", got.ServerVersion, want)
	}
}

// A minicp binary reads the version from its own build information (a
// test binary has none and reads go.mod): build one and ask it.
func TestABuiltMinicpReportsTheReleaseOfTheK8sModules(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/minicp")
	}
	want := k8sAPIRelease(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := startMinicpProcess(t, ctx, buildMinicp(t))
	defer p.stop(t)
	resp, err := http.Get(p.url + "/version")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got version.Info
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.GitVersion != want {
		t.Errorf("/version of the built binary: got %+v, want %s", got, want)
	}
}
