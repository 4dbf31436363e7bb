package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"minicp/e2e/framework"
)

// crontabYAML is the CRD of upstream's documentation, with printer
// columns and the scale subresource; versionsYAML is its versions list.
const crontabYAML = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
  versions:
%s`

const crontabV1YAML = `  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    additionalPrinterColumns:
    - name: Spec
      type: string
      jsonPath: .spec.cronSpec
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
`

const crontabV2YAML = `  - name: v2
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`

const crontabObjectYAML = `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: my-new-cron-object
spec:
  cronSpec: "* * * * */5"
  replicas: 1
`

// The real kubectl installs a CRD, waits for it to be Established, uses
// its objects by short name with the declared columns, scales one, sees a
// second version appear without a restart and the resource go with the CRD.
func TestKubectlUsesACustomResourceDefinition(t *testing.T) {
	requireKubectl(t)
	s := framework.Start(t, framework.Options{})
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	crd := write("crd.yaml", strings.Replace(crontabYAML, "%s", crontabV1YAML, 1))
	kubectl(t, s, "apply", "-f", crd)
	out := kubectl(t, s, "wait", "--for=condition=Established", "--timeout=10s", "crd/crontabs.stable.example.com")
	assertContains(t, "kubectl wait", out, "condition met")

	framework.Eventually(t, framework.StateTimeout, "kubectl to create the CronTab", func() bool {
		_, err := kubectlErr(t, s, "apply", "-f", write("ct.yaml", crontabObjectYAML))
		return err == nil
	})
	out = kubectl(t, s, "get", "ct")
	assertContains(t, "kubectl get ct", out, "NAME", "SPEC", "REPLICAS", "my-new-cron-object", "* * * * */5")
	kubectl(t, s, "scale", "crontab/my-new-cron-object", "--replicas=4")
	out = kubectl(t, s, "get", "crontab", "my-new-cron-object", "-o", "jsonpath={.spec.replicas}")
	if out != "4" {
		t.Errorf("spec.replicas after kubectl scale: %q, want 4", out)
	}
	out = kubectl(t, s, "api-resources", "--api-group=stable.example.com")
	assertContains(t, "kubectl api-resources", out, "crontabs", "ct", "stable.example.com/v1", "true", "CronTab")

	// A second version, served at once, reading the same object.
	kubectl(t, s, "apply", "-f", write("crd2.yaml", strings.Replace(crontabYAML, "%s", crontabV1YAML+crontabV2YAML, 1)))
	framework.Eventually(t, framework.StateTimeout, "the v2 CronTab to be readable", func() bool {
		out, err := kubectlErr(t, s, "get", "crontabs.v2.stable.example.com", "my-new-cron-object", "-o", "jsonpath={.apiVersion} {.spec.replicas}")
		return err == nil && out == "stable.example.com/v2 4"
	})

	kubectl(t, s, "delete", "-f", crd, "--timeout=30s")
	out, err := kubectlErr(t, s, "get", "crontabs")
	if err == nil || !strings.Contains(out, "crontabs") {
		t.Errorf("kubectl get crontabs after the CRD's deletion: %v\n%s", err, out)
	}
	out = kubectl(t, s, "api-resources")
	if strings.Contains(out, "stable.example.com") {
		t.Errorf("kubectl api-resources still lists stable.example.com:\n%s", out)
	}
}
