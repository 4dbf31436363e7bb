package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"minicp/e2e/framework"
)

// `kubectl apply --server-side`: create, update, a second manager's
// conflict naming the first, --force-conflicts taking the field over, and
// the managers in `kubectl get -o yaml --show-managed-fields`.
func TestKubectlServerSideApply(t *testing.T) {
	requireKubectl(t)
	s := framework.Start(t, framework.Options{})
	dir := t.TempDir()
	write := func(mode string) string {
		path := filepath.Join(dir, "settings-"+mode+".yaml")
		if err := os.WriteFile(path, []byte(fmt.Sprintf(smokeConfigMap, mode)), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}

	assertContains(t, "apply --server-side (create)", kubectl(t, s, "apply", "--server-side", "-f", write("a")), "configmap/settings serverside-applied")
	assertContains(t, "apply --server-side (update)", kubectl(t, s, "apply", "--server-side", "-f", write("b")), "configmap/settings serverside-applied")
	if got := kubectl(t, s, "get", "configmap", "settings", "-o", "jsonpath={.data.mode}"); got != "b" {
		t.Errorf("mode = %q after the second apply, want b", got)
	}

	out, err := kubectlErr(t, s, "apply", "--server-side", "--field-manager", "ops", "-f", write("c"))
	if err == nil {
		t.Fatalf("a second manager's apply of the same field succeeded:\n%s", out)
	}
	assertContains(t, "conflicting apply", out, "Apply failed with 1 conflict", `conflict with "kubectl"`, ".data.mode", "--force-conflicts")

	assertContains(t, "apply --force-conflicts", kubectl(t, s, "apply", "--server-side", "--field-manager", "ops", "--force-conflicts", "-f", write("c")),
		"configmap/settings serverside-applied")
	if got := kubectl(t, s, "get", "configmap", "settings", "-o", "jsonpath={.data.mode}"); got != "c" {
		t.Errorf("mode = %q after the forced apply, want c", got)
	}

	yaml := kubectl(t, s, "get", "configmap", "settings", "-o", "yaml", "--show-managed-fields")
	assertContains(t, "get --show-managed-fields", yaml, "managedFields:", "manager: ops", "operation: Apply", "f:mode: {}")
	if strings.Contains(yaml, "manager: kubectl\n") {
		t.Errorf("kubectl still manages a field after ops forced it away:\n%s", yaml)
	}
	if plain := kubectl(t, s, "get", "configmap", "settings", "-o", "yaml"); strings.Contains(plain, "managedFields") {
		t.Errorf("get -o yaml shows managedFields without --show-managed-fields:\n%s", plain)
	}

	// Client-side apply and edit-like writes are recorded under kubectl's
	// own manager names.
	kubectl(t, s, "apply", "-f", filepath.Join(dir, "settings-c.yaml"))
	kubectl(t, s, "label", "configmap", "settings", "tier=web")
	assertContains(t, "managers after label", kubectl(t, s, "get", "configmap", "settings", "-o", "yaml", "--show-managed-fields"),
		"manager: kubectl-label", "manager: kubectl-client-side-apply")
}
