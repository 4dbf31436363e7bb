package e2e

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"minicp/e2e/framework"
)

// kindCase is one built-in kind as a learner meets it: a manifest to
// create, the columns `kubectl get` prints, and where upstream keeps it.
type kindCase struct {
	resource   string // as kubectl names it: "deployments.apps"
	name       string
	manifest   string
	key        string // upstream's etcd key
	apiVersion string // the stored envelope's apiVersion and kind
	kind       string
	columns    []string // headers `kubectl get` prints
	scalable   bool
}

const podTemplate = `
    metadata:
      labels: {app: web}
    spec:
      containers:
      - {name: web, image: nginx:1.27}`

func builtinKinds() []kindCase {
	ns := "/registry/%s/default/"
	k := func(resource, name, prefix, apiVersion, kind, manifest string, columns ...string) kindCase {
		key := prefix + name
		if strings.Contains(prefix, "%s") {
			key = fmt.Sprintf(prefix, strings.Split(resource, ".")[0]) + name
		}
		if kind != "Event" { // an event's name is a wide column, after the others
			columns = append([]string{"NAME", name}, columns...)
		}
		return kindCase{resource: resource, name: name, manifest: manifest, key: key, apiVersion: apiVersion, kind: kind, columns: columns}
	}
	scalable := func(c kindCase) kindCase { c.scalable = true; return c }
	return []kindCase{
		k("secrets", "s1", ns, "v1", "Secret", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s1"},"stringData":{"a":"b"}}`, "TYPE", "DATA"),
		k("services", "svc1", "/registry/services/specs/default/", "v1", "Service",
			`{"apiVersion":"v1","kind":"Service","metadata":{"name":"svc1"},"spec":{"type":"NodePort","selector":{"app":"web"},"ports":[{"port":80}]}}`,
			"TYPE", "CLUSTER-IP", "PORT(S)"),
		k("endpoints", "ep1", "/registry/services/endpoints/default/", "v1", "Endpoints",
			`{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"ep1"},"subsets":[{"addresses":[{"ip":"10.1.2.3"}],"ports":[{"port":80}]}]}`, "ENDPOINTS"),
		k("serviceaccounts", "sa1", ns, "v1", "ServiceAccount", `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"sa1"}}`, "SECRETS"),
		k("persistentvolumeclaims", "pvc1", ns, "v1", "PersistentVolumeClaim",
			`{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"pvc1"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`,
			"STATUS", "STORAGECLASS"),
		k("persistentvolumes", "pv1", "/registry/persistentvolumes/", "v1", "PersistentVolume",
			`{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"pv1"},"spec":{"accessModes":["ReadWriteOnce"],"capacity":{"storage":"1Gi"},"hostPath":{"path":"/tmp/pv1"}}}`,
			"CAPACITY", "RECLAIM POLICY"),
		k("podtemplates", "pt1", ns, "v1", "PodTemplate", `{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"pt1"},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}`, "CONTAINERS", "IMAGES"),
		scalable(k("replicationcontrollers", "rc1", "/registry/controllers/default/", "v1", "ReplicationController",
			`{"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"rc1"},"spec":{"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`,
			"DESIRED", "CURRENT", "READY")),
		k("resourcequotas", "rq1", ns, "v1", "ResourceQuota", `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"rq1"},"spec":{"hard":{"pods":"10"}}}`, "REQUEST", "LIMIT"),
		k("limitranges", "lr1", ns, "v1", "LimitRange", `{"apiVersion":"v1","kind":"LimitRange","metadata":{"name":"lr1"},"spec":{"limits":[{"type":"Container","default":{"cpu":"100m"}}]}}`, "CREATED AT"),
		scalable(k("deployments.apps", "d1", ns, "apps/v1", "Deployment",
			"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d1}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:"+podTemplate, "READY", "UP-TO-DATE", "AVAILABLE")),
		scalable(k("replicasets.apps", "rs1", ns, "apps/v1", "ReplicaSet",
			"apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs1}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:"+podTemplate, "DESIRED", "CURRENT", "READY")),
		scalable(k("statefulsets.apps", "ss1", ns, "apps/v1", "StatefulSet",
			"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: ss1}\nspec:\n  serviceName: web\n  selector: {matchLabels: {app: web}}\n  template:"+podTemplate, "READY")),
		k("daemonsets.apps", "ds1", ns, "apps/v1", "DaemonSet",
			"apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds1}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:"+podTemplate, "DESIRED", "NODE SELECTOR"),
		k("controllerrevisions.apps", "cr1", ns, "apps/v1", "ControllerRevision", `{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"cr1"},"revision":1,"data":{"a":1}}`, "CONTROLLER", "REVISION"),
		k("jobs.batch", "job1", ns, "batch/v1", "Job",
			`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"job1"},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"pi","image":"perl"}]}}}}`,
			"STATUS", "COMPLETIONS", "DURATION"),
		k("cronjobs.batch", "cj1", ns, "batch/v1", "CronJob",
			`{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"cj1"},"spec":{"schedule":"*/5 * * * *","jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"OnFailure","containers":[{"name":"c","image":"busybox"}]}}}}}}`,
			"SCHEDULE", "SUSPEND", "ACTIVE"),
		k("horizontalpodautoscalers.autoscaling", "hpa1", ns, "autoscaling/v2", "HorizontalPodAutoscaler",
			`{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"hpa1"},"spec":{"maxReplicas":5,"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"d1"}}}`,
			"REFERENCE", "TARGETS", "MINPODS"),
		k("events.events.k8s.io", "ev1", ns, "v1", "Event",
			`{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"ev1"},"eventTime":"2026-01-02T03:04:05.000000Z","reportingController":"example.com/ctrl","reportingInstance":"ctrl-1","action":"Sync","reason":"Synced","type":"Normal","note":"synced","regarding":{"kind":"Pod","name":"p","namespace":"default"}}`,
			"TYPE", "REASON", "OBJECT", "NAME", "ev1"),
		k("roles.rbac.authorization.k8s.io", "role1", ns, "rbac.authorization.k8s.io/v1", "Role",
			`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"role1"},"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]}`, "CREATED AT"),
		k("rolebindings.rbac.authorization.k8s.io", "rb1", ns, "rbac.authorization.k8s.io/v1", "RoleBinding",
			`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"rb1"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"role1"},"subjects":[{"kind":"User","name":"jane"}]}`,
			"ROLE"),
		k("clusterroles.rbac.authorization.k8s.io", "system:test-reader", "/registry/clusterroles/", "rbac.authorization.k8s.io/v1", "ClusterRole",
			`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"system:test-reader"},"rules":[{"nonResourceURLs":["/version"],"verbs":["get"]}]}`, "CREATED AT"),
		k("clusterrolebindings.rbac.authorization.k8s.io", "crb1", "/registry/clusterrolebindings/", "rbac.authorization.k8s.io/v1", "ClusterRoleBinding",
			`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"crb1"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"system:test-reader"},"subjects":[{"kind":"Group","name":"devs"}]}`,
			"ROLE"),
		k("ingresses.networking.k8s.io", "ing1", "/registry/ingress/default/", "networking.k8s.io/v1", "Ingress",
			`{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"name":"ing1"},"spec":{"rules":[{"host":"example.com","http":{"paths":[{"path":"/","pathType":"Prefix","backend":{"service":{"name":"svc1","port":{"number":80}}}}]}}]}}`,
			"CLASS", "HOSTS", "ADDRESS"),
		k("ingressclasses.networking.k8s.io", "ic1", "/registry/ingressclasses/", "networking.k8s.io/v1", "IngressClass",
			`{"apiVersion":"networking.k8s.io/v1","kind":"IngressClass","metadata":{"name":"ic1"},"spec":{"controller":"example.com/ingress"}}`, "CONTROLLER"),
		k("networkpolicies.networking.k8s.io", "np1", ns, "networking.k8s.io/v1", "NetworkPolicy",
			`{"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"np1"},"spec":{"podSelector":{"matchLabels":{"app":"web"}}}}`, "POD-SELECTOR"),
		k("poddisruptionbudgets.policy", "pdb1", ns, "policy/v1", "PodDisruptionBudget",
			`{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"pdb1"},"spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"web"}}}}`,
			"MIN AVAILABLE", "ALLOWED DISRUPTIONS"),
		k("endpointslices.discovery.k8s.io", "es1", ns, "discovery.k8s.io/v1", "EndpointSlice",
			`{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":"es1"},"addressType":"IPv4","endpoints":[{"addresses":["10.1.2.3"]}],"ports":[{"port":80}]}`,
			"ADDRESSTYPE", "PORTS", "ENDPOINTS"),
		k("priorityclasses.scheduling.k8s.io", "high", "/registry/priorityclasses/", "scheduling.k8s.io/v1", "PriorityClass",
			`{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"high"},"value":1000}`, "VALUE", "GLOBAL-DEFAULT"),
		k("storageclasses.storage.k8s.io", "fast", "/registry/storageclasses/", "storage.k8s.io/v1", "StorageClass",
			`{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":"fast"},"provisioner":"example.com/disk"}`, "PROVISIONER", "RECLAIMPOLICY"),
		k("csidrivers.storage.k8s.io", "disk.example.com", "/registry/csidrivers/", "storage.k8s.io/v1", "CSIDriver",
			`{"apiVersion":"storage.k8s.io/v1","kind":"CSIDriver","metadata":{"name":"disk.example.com"},"spec":{}}`, "ATTACHREQUIRED", "MODES"),
		k("csinodes.storage.k8s.io", "node-1", "/registry/csinodes/", "storage.k8s.io/v1", "CSINode",
			`{"apiVersion":"storage.k8s.io/v1","kind":"CSINode","metadata":{"name":"node-1"},"spec":{"drivers":[{"name":"disk.example.com","nodeID":"n1"}]}}`, "DRIVERS"),
		k("volumeattachments.storage.k8s.io", "va1", "/registry/volumeattachments/", "storage.k8s.io/v1", "VolumeAttachment",
			`{"apiVersion":"storage.k8s.io/v1","kind":"VolumeAttachment","metadata":{"name":"va1"},"spec":{"attacher":"disk.example.com","nodeName":"node-1","source":{"persistentVolumeName":"pv1"}}}`,
			"ATTACHER", "ATTACHED"),
		k("validatingwebhookconfigurations.admissionregistration.k8s.io", "vwh1", "/registry/validatingwebhookconfigurations/", "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration",
			`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"vwh1"},"webhooks":[{"name":"check.example.com","clientConfig":{"service":{"namespace":"default","name":"svc1"}},"sideEffects":"None","admissionReviewVersions":["v1"]}]}`,
			"WEBHOOKS"),
		k("mutatingwebhookconfigurations.admissionregistration.k8s.io", "mwh1", "/registry/mutatingwebhookconfigurations/", "admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration",
			`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingWebhookConfiguration","metadata":{"name":"mwh1"},"webhooks":[{"name":"fix.example.com","clientConfig":{"url":"https://example.com/fix"},"sideEffects":"None","admissionReviewVersions":["v1"]}]}`,
			"WEBHOOKS"),
	}
}

// The real kubectl creates, gets, describes, scales and deletes every
// built-in kind minicp serves; each object lands at upstream's etcd key
// as upstream's protobuf envelope (M2).
func TestKubectlServesEveryBuiltinKind(t *testing.T) {
	requireKubectl(t)
	s := framework.Start(t, framework.Options{})
	dir := t.TempDir()
	for _, c := range builtinKinds() {
		t.Run(c.resource, func(t *testing.T) {
			// Each kind is an object of its own on the one stack, and
			// most of the time goes to starting kubectl: the kinds run
			// side by side.
			t.Parallel()
			file := filepath.Join(dir, strings.ReplaceAll(c.resource, ".", "-")+".yaml")
			if err := os.WriteFile(file, []byte(c.manifest), 0o600); err != nil {
				t.Fatal(err)
			}
			kubectl(t, s, "create", "-f", file)
			out := kubectl(t, s, "get", c.resource, c.name, "-o", "wide")
			assertContains(t, "kubectl get "+c.resource, out, c.columns...)
			kubectl(t, s, "describe", c.resource, c.name)
			kubectl(t, s, "explain", strings.Split(c.resource, ".")[0])
			assertStoredAt(t, s, c)
			if c.scalable {
				kubectl(t, s, "scale", c.resource+"/"+c.name, "--replicas=3")
				got := kubectl(t, s, "get", c.resource, c.name, "-o", "jsonpath={.spec.replicas} {.metadata.generation}")
				if got != "3 2" {
					t.Errorf("after kubectl scale: spec.replicas and generation %q, want \"3 2\"", got)
				}
			}
			kubectl(t, s, "delete", c.resource, c.name)
			if resp, err := s.Etcd.Get(framework.Context(t, 10*time.Second), c.key); err != nil || len(resp.Kvs) != 0 {
				t.Errorf("after delete, %s: %v, %d keys", c.key, err, len(resp.Kvs))
			}
		})
	}
}

// assertStoredAt checks the object's key and envelope.
func assertStoredAt(t *testing.T, s *framework.Stack, c kindCase) {
	t.Helper()
	resp, err := s.Etcd.Get(framework.Context(t, 10*time.Second), c.key)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("etcd key %s: %v, %d keys", c.key, err, len(resp.Kvs))
	}
	value := resp.Kvs[0].Value
	if !bytes.HasPrefix(value, []byte("k8s\x00")) {
		t.Fatalf("%s: value is not the protobuf envelope: %q", c.key, value[:min(16, len(value))])
	}
	var unknown runtime.Unknown
	if err := unknown.Unmarshal(value[4:]); err != nil {
		t.Fatalf("%s: %v", c.key, err)
	}
	if unknown.APIVersion != c.apiVersion || unknown.Kind != c.kind {
		t.Errorf("%s holds %s %s, want %s %s", c.key, unknown.APIVersion, unknown.Kind, c.apiVersion, c.kind)
	}
}

// What a learner types first works: kubectl's generators for
// deployments, secrets and services, kubectl scale, and cluster-info.
func TestKubectlLearnerCommands(t *testing.T) {
	requireKubectl(t)
	s := framework.Start(t, framework.Options{})
	kubectl(t, s, "create", "deployment", "nginx", "--image=nginx")
	kubectl(t, s, "create", "secret", "generic", "s", "--from-literal=a=b")
	kubectl(t, s, "create", "service", "clusterip", "x", "--tcp=80")
	kubectl(t, s, "scale", "deployment", "nginx", "--replicas=2")
	out := kubectl(t, s, "get", "deployment", "nginx", "-o", "jsonpath={.spec.replicas} {.spec.strategy.type} {.spec.progressDeadlineSeconds}")
	if out != "2 RollingUpdate 600" {
		t.Errorf("deployment: got %q, want \"2 RollingUpdate 600\"", out)
	}
	if out := kubectl(t, s, "get", "secret", "s", "-o", "jsonpath={.type} {.data.a}"); out != "Opaque Yg==" {
		t.Errorf("secret: got %q, want \"Opaque Yg==\"", out)
	}
	out = kubectl(t, s, "get", "service", "x", "-o", "jsonpath={.spec.clusterIP} {.spec.type} {.spec.ipFamilies[0]}")
	if !strings.HasPrefix(out, "10.0.0.") || !strings.HasSuffix(out, " ClusterIP IPv4") {
		t.Errorf("service: got %q", out)
	}
	out = kubectl(t, s, "cluster-info")
	assertContains(t, "kubectl cluster-info", out, "Kubernetes control plane is running at "+s.ControlPlane.URL())
	out = kubectl(t, s, "get", "endpoints,endpointslices", "-n", "default")
	apiserver, err := url.Parse(s.ControlPlane.URL())
	if err != nil {
		t.Fatal(err)
	}
	assertContains(t, "the kubernetes endpoints", out, "kubernetes", apiserver.Host)
	out, err = kubectlErr(t, s, "create", "service", "nodeport", "bad", "--tcp=80", "--node-port=80")
	if err == nil || !strings.Contains(out, "spec.ports[0].nodePort") || !strings.Contains(out, "30000-32767") {
		t.Errorf("a node port outside --service-node-port-range: %v\n%s", err, out)
	}
}
