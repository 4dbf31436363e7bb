package e2e

import (
	"testing"

	"minicp/e2e/framework"
)

// What minicp does not serve says so. kubectl logs, exec and port-forward
// reach a pod's containers through its kubelet; minicp runs no containers,
// and the real kubectl prints the Status that says so. A raw request for a
// resource minicp does not serve gets a 404 naming it and pointing to
// kubectl api-resources.
func TestKubectlLogsAndExecSayThatMinicpRunsNoContainers(t *testing.T) {
	requireKubectl(t)
	s := framework.Start(t, framework.Options{})
	kubectl(t, s, "run", "web", "--image=nginx:1.27")

	out, err := kubectlErr(t, s, "logs", "web")
	if err == nil {
		t.Fatalf("kubectl logs succeeded:\n%s", out)
	}
	t.Logf("kubectl logs: %s", out)
	assertContains(t, "kubectl logs", out, "BadRequest", `pod "web" has no logs to read: minicp stores pods but runs no containers`)

	out, err = kubectlErr(t, s, "exec", "web", "--", "ls")
	if err == nil {
		t.Fatalf("kubectl exec succeeded:\n%s", out)
	}
	t.Logf("kubectl exec: %s", out)
	assertContains(t, "kubectl exec", out, `pod "web" has nothing to exec in: minicp stores pods but runs no containers`)

	out, err = kubectlErr(t, s, "logs", "missing")
	if err == nil {
		t.Fatalf("kubectl logs of a missing pod succeeded:\n%s", out)
	}
	assertContains(t, "kubectl logs missing", out, `pods "missing" not found`)

	out, err = kubectlErr(t, s, "get", "--raw", "/apis/example.com/v1/widgets")
	if err == nil {
		t.Fatalf("GET of an unserved resource succeeded:\n%s", out)
	}
	assertContains(t, "get --raw an unserved resource", out, `minicp does not serve the resource "widgets" in the group version example.com/v1`, "kubectl api-resources")
}
