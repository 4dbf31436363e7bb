package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"minicp/e2e/framework"
)

const smokePod = `apiVersion: v1
kind: Pod
metadata:
  name: nginx
  labels:
    app: web
spec:
  containers:
  - name: nginx
    image: nginx:1.27
`

const smokeConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  mode: %s
`

// kubectl runs the real kubectl against s and returns its combined output.
func kubectl(t *testing.T, s *framework.Stack, args ...string) string {
	t.Helper()
	out, err := kubectlErr(t, s, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func kubectlErr(t *testing.T, s *framework.Stack, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+s.Kubeconfig, "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func requireKubectl(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not installed; the smoke test needs the real kubectl")
	}
}

func assertContains(t *testing.T, what, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("%s: output does not contain %q:\n%s", what, want, out)
		}
	}
}

// The real kubectl works against minicp without extra flags: validation on,
// tables, client-side apply, every patch type, watch, discovery and metrics.
func TestKubectlSmoke(t *testing.T) {
	requireKubectl(t)
	s := framework.Start(t, framework.Options{})
	dir := t.TempDir()
	podFile := filepath.Join(dir, "pod.yaml")
	if err := os.WriteFile(podFile, []byte(smokePod), 0o600); err != nil {
		t.Fatal(err)
	}

	assertContains(t, "get ns", kubectl(t, s, "get", "ns"), "NAME", "STATUS", "AGE", "default", "kube-node-lease", "Active")

	// Start a watch before the writes; it must report them.
	watchCtx, stopWatch := context.WithCancel(context.Background())
	defer stopWatch()
	watchCmd := exec.CommandContext(watchCtx, "kubectl", "get", "pods", "-w", "--output-watch-events")
	watchCmd.Env = append(os.Environ(), "KUBECONFIG="+s.Kubeconfig, "HOME="+t.TempDir())
	watchOut, err := watchCmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := watchCmd.Start(); err != nil {
		t.Fatalf("kubectl get pods -w: %v", err)
	}
	watchLines := make(chan string, 100)
	go func() {
		defer close(watchLines)
		sc := bufio.NewScanner(watchOut)
		for sc.Scan() {
			watchLines <- sc.Text()
		}
	}()

	assertContains(t, "create -f", kubectl(t, s, "create", "-f", podFile), "pod/nginx created")
	assertContains(t, "get pods -o wide", kubectl(t, s, "get", "pods", "-o", "wide"), "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "nginx", "0/1", "Pending")

	var pod map[string]any
	if err := json.Unmarshal([]byte(kubectl(t, s, "get", "pod", "nginx", "-o", "json")), &pod); err != nil {
		t.Fatalf("get -o json is not JSON: %v", err)
	}
	assertContains(t, "get -o yaml", kubectl(t, s, "get", "pod", "nginx", "-o", "yaml"), "apiVersion: v1", "kind: Pod", "resourceVersion:", "uid:", "image: nginx:1.27")
	assertContains(t, "describe pod", kubectl(t, s, "describe", "pod", "nginx"), "Name:", "nginx", "Namespace:", "default", "Image:", "nginx:1.27")

	assertContains(t, "patch merge", kubectl(t, s, "patch", "pod", "nginx", "--type=merge", "-p", `{"metadata":{"labels":{"tier":"frontend"}}}`), "pod/nginx patched")
	assertContains(t, "patch json", kubectl(t, s, "patch", "pod", "nginx", "--type=json", "-p", `[{"op":"add","path":"/metadata/annotations","value":{"owner":"lab"}}]`), "pod/nginx patched")
	assertContains(t, "patch strategic", kubectl(t, s, "patch", "pod", "nginx", "-p", `{"spec":{"containers":[{"name":"nginx","image":"nginx:1.28"}]}}`), "pod/nginx patched")
	assertContains(t, "label", kubectl(t, s, "label", "pod", "nginx", "env=lab"), "pod/nginx labeled")
	assertContains(t, "get --show-labels", kubectl(t, s, "get", "pod", "nginx", "-o", "jsonpath={.metadata.labels.tier},{.metadata.labels.env},{.metadata.annotations.owner},{.spec.containers[0].image}"), "frontend,lab,lab,nginx:1.28")

	cmFile := filepath.Join(dir, "cm.yaml")
	for i, mode := range []string{"one", "two"} {
		if err := os.WriteFile(cmFile, []byte(strings.Replace(smokeConfigMap, "%s", mode, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		want := "configmap/settings created"
		if i > 0 {
			want = "configmap/settings configured"
		}
		assertContains(t, "apply -f", kubectl(t, s, "apply", "-f", cmFile), want)
	}
	assertContains(t, "apply result", kubectl(t, s, "get", "configmap", "settings", "-o", "jsonpath={.data.mode}"), "two")

	assertContains(t, "delete", kubectl(t, s, "delete", "pod", "nginx"), `pod "nginx" deleted`)
	assertContains(t, "get leases", kubectl(t, s, "get", "leases", "-n", "kube-node-lease"), "No resources found in kube-node-lease namespace.")
	assertContains(t, "get --raw /metrics", kubectl(t, s, "get", "--raw", "/metrics"), "apiserver_request_total", "etcd_")
	assertContains(t, "api-resources", kubectl(t, s, "api-resources"), "pods", "po", "namespaces", "leases", "coordination.k8s.io/v1", "configmaps", "events", "nodes")

	// The watch saw the pod come, change and go.
	var seen []string
	deadline := time.After(15 * time.Second)
	for !strings.Contains(strings.Join(seen, "\n"), "DELETED") {
		select {
		case line, ok := <-watchLines:
			if !ok {
				t.Fatalf("kubectl get pods -w ended early; saw:\n%s", strings.Join(seen, "\n"))
			}
			seen = append(seen, line)
		case <-deadline:
			t.Fatalf("kubectl get pods -w did not report the deletion; saw:\n%s", strings.Join(seen, "\n"))
		}
	}
	assertContains(t, "get pods -w", strings.Join(seen, "\n"), "ADDED", "MODIFIED", "DELETED", "nginx")
	stopWatch()
	_ = watchCmd.Wait() // killed by stopWatch; its exit status says nothing
}
