package kinds

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func nginxTemplate(labels map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}},
	}
}

func newDeployment() *appsv1.Deployment {
	app := map[string]string{"app": "nginx"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "default"},
		Spec:       appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: app}, Template: nginxTemplate(app)},
	}
}

// fieldPaths lists the field of each error, "path: type", sorted as found.
func fieldPaths(errs field.ErrorList) string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field+": "+string(e.Type))
	}
	return strings.Join(out, ", ")
}

func TestDeploymentDefaultsAreUpstreams(t *testing.T) {
	d := newDeployment()
	defaultDeployment(d)
	quarter := intstr.FromString("25%")
	want := appsv1.DeploymentSpec{
		Replicas: int32Ptr(1), Selector: d.Spec.Selector,
		Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &quarter, MaxSurge: &quarter}},
		RevisionHistoryLimit: int32Ptr(10), ProgressDeadlineSeconds: int32Ptr(600),
	}
	got := d.Spec.DeepCopy()
	got.Template = appsv1.DeploymentSpec{}.Template
	if !equality.Semantic.DeepEqual(*got, want) {
		t.Fatalf("got %+v, want %+v", *got, want)
	}
	spec := d.Spec.Template.Spec
	if spec.RestartPolicy != corev1.RestartPolicyAlways || spec.DNSPolicy != corev1.DNSClusterFirst ||
		*spec.TerminationGracePeriodSeconds != 30 || spec.Containers[0].ImagePullPolicy != corev1.PullAlways ||
		spec.Containers[0].TerminationMessagePath != "/dev/termination-log" {
		t.Fatalf("template not defaulted like a pod: %+v", spec)
	}
	// What only pods get, templates do not (as upstream).
	if spec.EnableServiceLinks != nil {
		t.Fatalf("a template got enableServiceLinks")
	}
}

func TestDeploymentValidation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*appsv1.Deployment)
		want   string
	}{
		{"a valid deployment passes", func(*appsv1.Deployment) {}, ""},
		{"a selector that does not match the template's labels is refused", func(d *appsv1.Deployment) {
			d.Spec.Template.Labels = map[string]string{"app": "other"}
		}, "spec.template.metadata.labels: FieldValueInvalid"},
		{"a missing selector is refused", func(d *appsv1.Deployment) { d.Spec.Selector = nil }, "spec.selector: FieldValueRequired"},
		{"negative replicas are refused", func(d *appsv1.Deployment) { d.Spec.Replicas = int32Ptr(-1) }, "spec.replicas: FieldValueInvalid"},
		{"a template that does not restart is refused", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
		}, "spec.template.spec.restartPolicy: FieldValueNotSupported"},
		{"no surge and no unavailability is refused", func(d *appsv1.Deployment) {
			zero := intstr.FromInt32(0)
			d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: &zero, MaxUnavailable: &zero}
		}, "spec.strategy.rollingUpdate.maxUnavailable: FieldValueInvalid"},
		{"Recreate with rolling parameters is refused", func(d *appsv1.Deployment) {
			d.Spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType
		}, "spec.strategy.rollingUpdate: FieldValueForbidden"},
		{"a container without an image is refused", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Image = ""
		}, "spec.template.spec.containers[0].image: FieldValueRequired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDeployment()
			defaultDeployment(d)
			tc.change(d)
			if got := fieldPaths(validateDeployment(d)); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	old := newDeployment()
	d := newDeployment()
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx", "tier": "web"}}
	if got := fieldPaths(validateSelectorUnchanged(d.Spec.Selector, old.Spec.Selector)); got != "spec.selector: FieldValueInvalid" {
		t.Fatalf("changed selector: got %q", got)
	}
}

func TestWorkloadDefaults(t *testing.T) {
	app := map[string]string{"app": "db"}
	ss := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Template: nginxTemplate(app),
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{}}}}
	defaultStatefulSet(ss)
	if *ss.Spec.Replicas != 1 || ss.Spec.PodManagementPolicy != appsv1.OrderedReadyPodManagement ||
		*ss.Spec.UpdateStrategy.RollingUpdate.Partition != 0 || *ss.Spec.RevisionHistoryLimit != 10 ||
		ss.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted != appsv1.RetainPersistentVolumeClaimRetentionPolicyType ||
		*ss.Spec.VolumeClaimTemplates[0].Spec.VolumeMode != corev1.PersistentVolumeFilesystem {
		t.Fatalf("statefulset: %+v", ss.Spec)
	}
	ds := &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{Template: nginxTemplate(app)}}
	defaultDaemonSet(ds)
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType || ru.MaxUnavailable.IntValue() != 1 || ru.MaxSurge.IntValue() != 0 {
		t.Fatalf("daemonset: %+v", ds.Spec.UpdateStrategy)
	}
	rs := &appsv1.ReplicaSet{}
	defaultReplicaSet(rs)
	if *rs.Spec.Replicas != 1 {
		t.Fatalf("replicaset replicas: %d", *rs.Spec.Replicas)
	}
	tmpl := nginxTemplate(app)
	rc := &corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{Template: &tmpl}}
	defaultReplicationController(rc)
	if rc.Spec.Selector["app"] != "db" || rc.Labels["app"] != "db" || *rc.Spec.Replicas != 1 {
		t.Fatalf("replicationcontroller: %+v %+v", rc.ObjectMeta, rc.Spec)
	}
}

func TestStatefulSetUpdateMayChangeOnlySomeFields(t *testing.T) {
	app := map[string]string{"app": "db"}
	old := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{ServiceName: "db", Template: nginxTemplate(app)}}
	scaled := old.DeepCopy()
	scaled.Spec.Replicas = int32Ptr(3)
	if errs := validateStatefulSetUpdate(scaled, old); len(errs) != 0 {
		t.Fatalf("scaling: %v", errs)
	}
	renamed := old.DeepCopy()
	renamed.Spec.ServiceName = "other"
	if got := fieldPaths(validateStatefulSetUpdate(renamed, old)); got != "spec: FieldValueForbidden" {
		t.Fatalf("changing serviceName: got %q", got)
	}
}

func TestServiceDefaultsAndValidation(t *testing.T) {
	svc := &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	defaultService(svc)
	p := svc.Spec.Ports[0]
	if svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.SessionAffinity != corev1.ServiceAffinityNone ||
		p.Protocol != corev1.ProtocolTCP || p.TargetPort != intstr.FromInt32(80) ||
		*svc.Spec.InternalTrafficPolicy != corev1.ServiceInternalTrafficPolicyCluster {
		t.Fatalf("got %+v", svc.Spec)
	}
	if errs := validateService(svc); len(errs) != 0 {
		t.Fatalf("valid service: %v", errs)
	}
	for _, tc := range []struct {
		name  string
		ports []corev1.ServicePort
		want  string
	}{
		{"two ports need names", []corev1.ServicePort{{Port: 80}, {Port: 443}}, "spec.ports[0].name: FieldValueRequired, spec.ports[1].name: FieldValueRequired"},
		{"names are unique", []corev1.ServicePort{{Name: "a", Port: 80}, {Name: "a", Port: 443}}, "spec.ports[1].name: FieldValueDuplicate"},
		{"port numbers are valid", []corev1.ServicePort{{Port: 70000}}, "spec.ports[0].port: FieldValueInvalid, spec.ports[0].targetPort: FieldValueInvalid"},
		{"protocols are known", []corev1.ServicePort{{Port: 80, Protocol: "HTTP"}}, "spec.ports[0].protocol: FieldValueNotSupported"},
		{"a ClusterIP service has no node port", []corev1.ServicePort{{Port: 80, NodePort: 30080}}, "spec.ports[0].nodePort: FieldValueForbidden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := &corev1.Service{Spec: corev1.ServiceSpec{Ports: tc.ports}}
			defaultService(svc)
			if got := fieldPaths(validateService(svc)); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	np := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}}}}
	defaultService(np)
	if np.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster || !needsNodePorts(np) {
		t.Fatalf("node port service: %+v", np.Spec)
	}
}

func TestServiceUpdateKeepsAddresses(t *testing.T) {
	old := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIP: "10.0.0.20", ClusterIPs: []string{"10.0.0.20"},
		Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP, NodePort: 30080}}}}
	svc := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}}}}
	defaultService(svc)
	keepServiceAddresses(svc, old)
	if svc.Spec.ClusterIP != "10.0.0.20" || svc.Spec.Ports[0].NodePort != 30080 {
		t.Fatalf("got %+v", svc.Spec)
	}
	svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "10.0.0.21", []string{"10.0.0.21"}
	if errs := validateServiceUpdate(svc, old); len(errs) == 0 {
		t.Fatal("a changed clusterIP was accepted")
	}
}

func TestSecretDefaultsAndValidation(t *testing.T) {
	s := &corev1.Secret{Data: map[string][]byte{"a": []byte("x")}, StringData: map[string]string{"a": "y", "b": "z"}}
	defaultSecret(s)
	if s.Type != corev1.SecretTypeOpaque || string(s.Data["a"]) != "y" || string(s.Data["b"]) != "z" || s.StringData != nil {
		t.Fatalf("got %+v", s)
	}
	for _, tc := range []struct {
		name   string
		secret corev1.Secret
		want   string
	}{
		{"tls needs a certificate and a key", corev1.Secret{Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": nil}}, "data[tls.key]: FieldValueRequired"},
		{"dockerconfigjson needs valid JSON", corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{".dockerconfigjson": []byte("{")}}, "data[.dockerconfigjson]: FieldValueInvalid"},
		{"a token names its service account", corev1.Secret{Type: corev1.SecretTypeServiceAccountToken}, "metadata.annotations[kubernetes.io/service-account.name]: FieldValueRequired"},
		{"basic-auth needs a username or a password", corev1.Secret{Type: corev1.SecretTypeBasicAuth}, "data[username]: FieldValueRequired, data[password]: FieldValueRequired"},
		{"ssh-auth needs a private key", corev1.Secret{Type: corev1.SecretTypeSSHAuth}, "data[ssh-privatekey]: FieldValueRequired"},
		{"keys are valid", corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"a/b": nil}}, "data[a/b]: FieldValueInvalid"},
		{"data is at most 1 MiB", corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"big": make([]byte, secretMaxBytes+1)}}, "data: FieldValueTooLong"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fieldPaths(validateSecret(&tc.secret)); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	yes := true
	old := &corev1.Secret{Type: corev1.SecretTypeOpaque, Immutable: &yes, Data: map[string][]byte{"a": []byte("x")}}
	changed := old.DeepCopy()
	changed.Data["a"] = []byte("y")
	if got := fieldPaths(validateSecretUpdate(changed, old)); got != "data: FieldValueForbidden" {
		t.Fatalf("immutable secret: got %q", got)
	}
}

func TestJobDefaultsSelectorAndValidation(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "pi", UID: "uid-1"},
		Spec: batchv1.JobSpec{Template: nginxTemplate(nil)}}
	job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	defaultJob(job)
	if *job.Spec.Completions != 1 || *job.Spec.Parallelism != 1 || *job.Spec.BackoffLimit != 6 ||
		*job.Spec.CompletionMode != batchv1.NonIndexedCompletion || *job.Spec.Suspend ||
		*job.Spec.PodReplacementPolicy != batchv1.TerminatingOrFailed {
		t.Fatalf("got %+v", job.Spec)
	}
	generateJobSelector(job)
	if job.Spec.Selector.MatchLabels[jobControllerUIDLabel] != "uid-1" || job.Spec.Template.Labels[jobNameLabel] != "pi" {
		t.Fatalf("selector %v, template labels %v", job.Spec.Selector, job.Spec.Template.Labels)
	}
	if errs := validateJob(job); len(errs) != 0 {
		t.Fatalf("valid job: %v", errs)
	}
	job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	if got := fieldPaths(validateJob(job)); got != "spec.template.spec.restartPolicy: FieldValueNotSupported" {
		t.Fatalf("restartPolicy Always: got %q", got)
	}
	parallel := &batchv1.Job{Spec: batchv1.JobSpec{Parallelism: int32Ptr(3)}}
	defaultJob(parallel)
	if parallel.Spec.Completions != nil || *parallel.Spec.Parallelism != 3 {
		t.Fatalf("a work queue job got completions: %+v", parallel.Spec)
	}
}

func TestCronJobDefaultsAndSchedule(t *testing.T) {
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "hello"}, Spec: batchv1.CronJobSpec{Schedule: "*/1 * * * *",
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: nginxTemplate(nil)}}}}
	cj.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	defaultCronJob(cj)
	if cj.Spec.ConcurrencyPolicy != batchv1.AllowConcurrent || *cj.Spec.Suspend || *cj.Spec.SuccessfulJobsHistoryLimit != 3 || *cj.Spec.FailedJobsHistoryLimit != 1 {
		t.Fatalf("got %+v", cj.Spec)
	}
	if errs := validateCronJob(cj); len(errs) != 0 {
		t.Fatalf("valid cronjob: %v", errs)
	}
	cj.Spec.Schedule = "every minute"
	if got := fieldPaths(validateCronJob(cj)); got != "spec.schedule: FieldValueInvalid" {
		t.Fatalf("bad schedule: got %q", got)
	}
}

// The generation starts at 1, grows with spec changes only; the status
// survives a main update and the spec a status update.
func TestGenerationFollowsSpecChangesOnly(t *testing.T) {
	d := newDeployment()
	d.Status.Replicas = 5
	createWithGeneration(d)
	if d.Generation != 1 || d.Status.Replicas != 0 {
		t.Fatalf("created: generation %d, status %+v", d.Generation, d.Status)
	}
	d.Status.Replicas = 2
	labelled := d.DeepCopy()
	labelled.Labels = map[string]string{"new": "label"}
	labelled.Status.Replicas = 0
	updateWithGeneration(labelled, d)
	if labelled.Generation != 1 || labelled.Status.Replicas != 2 {
		t.Fatalf("metadata change: generation %d, status %+v", labelled.Generation, labelled.Status)
	}
	scaled := labelled.DeepCopy()
	scaled.Spec.Replicas = int32Ptr(3)
	updateWithGeneration(scaled, labelled)
	if scaled.Generation != 2 {
		t.Fatalf("spec change: generation %d, want 2", scaled.Generation)
	}
	status := scaled.DeepCopy()
	status.Spec.Replicas = int32Ptr(9)
	status.Status.Replicas = 3
	updateStatusOnly(status, scaled)
	if *status.Spec.Replicas != 3 || status.Status.Replicas != 3 {
		t.Fatalf("status update: spec %d, status %d", *status.Spec.Replicas, status.Status.Replicas)
	}
	secret := &corev1.Secret{}
	createWithGeneration(secret)
	if secret.Generation != 0 {
		t.Fatalf("a kind without a spec got generation %d", secret.Generation)
	}
}

func TestScaleOfEachScalableKind(t *testing.T) {
	tmpl := nginxTemplate(map[string]string{"app": "x"})
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	cases := []struct {
		gv       schema.GroupVersion
		resource string
		obj      runtime.Object
	}{
		{appsv1.SchemeGroupVersion, "deployments", &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", ResourceVersion: "7"}, Spec: appsv1.DeploymentSpec{Replicas: int32Ptr(2), Selector: sel}, Status: appsv1.DeploymentStatus{Replicas: 1}}},
		{appsv1.SchemeGroupVersion, "replicasets", &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "r", ResourceVersion: "7"}, Spec: appsv1.ReplicaSetSpec{Replicas: int32Ptr(2), Selector: sel}, Status: appsv1.ReplicaSetStatus{Replicas: 1}}},
		{appsv1.SchemeGroupVersion, "statefulsets", &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "s", ResourceVersion: "7"}, Spec: appsv1.StatefulSetSpec{Replicas: int32Ptr(2), Selector: sel}, Status: appsv1.StatefulSetStatus{Replicas: 1}}},
		{corev1.SchemeGroupVersion, "replicationcontrollers", &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "c", ResourceVersion: "7"}, Spec: corev1.ReplicationControllerSpec{Replicas: int32Ptr(2), Selector: map[string]string{"app": "x"}, Template: &tmpl}, Status: corev1.ReplicationControllerStatus{Replicas: 1}}},
	}
	for _, tc := range cases {
		res := mustResource(t, tc.gv, tc.resource)
		if res.Scale == nil {
			t.Fatalf("%s: no scale rules", tc.resource)
		}
		spec, status, selector := res.Scale.Replicas(tc.obj)
		if spec != 2 || status != 1 || selector != "app=x" {
			t.Fatalf("%s: got replicas %d, status %d, selector %q; want 2, 1, app=x", tc.resource, spec, status, selector)
		}
		res.Scale.SetReplicas(tc.obj, 5)
		if again, _, _ := res.Scale.Replicas(tc.obj); again != 5 {
			t.Fatalf("%s: replicas after SetReplicas: %d", tc.resource, again)
		}
	}
	if pods := podsResource(t); pods.Scale != nil {
		t.Fatal("a pod has a scale")
	}
}

func TestEventsConvertBothWaysWithoutLoss(t *testing.T) {
	v1 := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "default"},
		EventTime:  metav1.NewMicroTime(metav1.Now().Time), ReportingController: "ctrl", ReportingInstance: "ctrl-1",
		Action: "Reconcile", Reason: "Synced", Note: "all good", Type: corev1.EventTypeNormal,
		Regarding: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: "default"},
		Series:    &eventsv1.EventSeries{Count: 2}, DeprecatedCount: 3,
	}
	core := coreEventFromV1(v1)
	if core.Message != "all good" || core.InvolvedObject.Name != "p" || core.ReportingController != "ctrl" || core.Count != 3 {
		t.Fatalf("core: %+v", core)
	}
	if back := v1EventFromCore(core); !equality.Semantic.DeepEqual(back, v1) {
		t.Fatalf("round trip: got %+v, want %+v", back, v1)
	}
}
