package kinds

import (
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validationCase changes a valid object and names the cause it must get
// ("" for none).
type validationCase[T any] struct {
	name   string
	change func(T)
	want   string
}

// checkValidation runs each case on a fresh valid object: the causes must
// hold want (one "field: type"), or be none when want is "".
func checkValidation[T any](t *testing.T, valid func() T, validate func(T) field.ErrorList, cases []validationCase[T]) {
	t.Helper()
	for _, tc := range cases {
		obj := valid()
		tc.change(obj)
		got := fieldPaths(validate(obj))
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: got causes %q, want %q", tc.name, got, tc.want)
		}
	}
}

func newCronJob() *batchv1.CronJob {
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "hello"}, Spec: batchv1.CronJobSpec{Schedule: "*/5 * * * *",
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: nginxTemplate(nil)}}}}
	cj.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	defaultCronJob(cj)
	return cj
}

func strPtr(s string) *string { return &s }

func TestCronJobSchedulesAndTimeZonesAreParsedAsUpstream(t *testing.T) {
	validate := func(cj *batchv1.CronJob) field.ErrorList {
		return append(validateCronJob(cj), validateScheduleTimeZone(cj, nil)...)
	}
	checkValidation(t, newCronJob, validate, []validationCase[*batchv1.CronJob]{
		{"five fields", func(*batchv1.CronJob) {}, ""},
		{"names, ranges, lists and steps", func(cj *batchv1.CronJob) { cj.Spec.Schedule = "0-30/10 9,17 1-15 JAN-JUN MON-FRI" }, ""},
		{"a descriptor", func(cj *batchv1.CronJob) { cj.Spec.Schedule = "@weekly" }, ""},
		{"@every", func(cj *batchv1.CronJob) { cj.Spec.Schedule = "@every 90m" }, ""},
		{"an explicit time zone", func(cj *batchv1.CronJob) { cj.Spec.TimeZone = strPtr("Europe/Berlin") }, ""},
		{"a minute out of range", func(cj *batchv1.CronJob) { cj.Spec.Schedule = "61 * * * *" }, "spec.schedule: FieldValueInvalid"},
		{"four fields", func(cj *batchv1.CronJob) { cj.Spec.Schedule = "* * * *" }, "spec.schedule: FieldValueInvalid"},
		{"a word", func(cj *batchv1.CronJob) { cj.Spec.Schedule = "every minute" }, "spec.schedule: FieldValueInvalid"},
		{"an unknown month", func(cj *batchv1.CronJob) { cj.Spec.Schedule = "0 0 1 FOO *" }, "spec.schedule: FieldValueInvalid"},
		{"a bad @every", func(cj *batchv1.CronJob) { cj.Spec.Schedule = "@every soon" }, "spec.schedule: FieldValueInvalid"},
		{"no schedule", func(cj *batchv1.CronJob) { cj.Spec.Schedule = "" }, "spec.schedule: FieldValueRequired"},
		{"TZ in the schedule", func(cj *batchv1.CronJob) { cj.Spec.Schedule = "CRON_TZ=UTC 0 * * * *" }, "spec.schedule: FieldValueInvalid"},
		{"an unknown zone", func(cj *batchv1.CronJob) { cj.Spec.TimeZone = strPtr("Mars/Olympus_Mons") }, "spec.timeZone: FieldValueInvalid"},
		{"Local", func(cj *batchv1.CronJob) { cj.Spec.TimeZone = strPtr("Local") }, "spec.timeZone: FieldValueInvalid"},
		{"an empty zone", func(cj *batchv1.CronJob) { cj.Spec.TimeZone = strPtr("") }, "spec.timeZone: FieldValueInvalid"},
		{"a path in the zone", func(cj *batchv1.CronJob) { cj.Spec.TimeZone = strPtr("../etc/passwd") }, "spec.timeZone: FieldValueInvalid"},
	})
	// A CronJob stored with TZ= in its schedule may keep it on update,
	// but not beside a timeZone.
	old := newCronJob()
	old.Spec.Schedule = "TZ=UTC 0 * * * *"
	cj := old.DeepCopy()
	if errs := validateScheduleTimeZone(cj, old); len(errs) != 0 {
		t.Fatalf("keeping TZ= on update: %v", errs)
	}
	cj.Spec.TimeZone = strPtr("UTC")
	if got := fieldPaths(validateScheduleTimeZone(cj, old)); got != "spec.schedule: FieldValueInvalid" {
		t.Fatalf("TZ= beside timeZone: got %q", got)
	}
}

func newClaim() *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
}

func TestPersistentVolumeClaimValidation(t *testing.T) {
	checkValidation(t, newClaim, validatePersistentVolumeClaim, []validationCase[*corev1.PersistentVolumeClaim]{
		{"a valid claim", func(*corev1.PersistentVolumeClaim) {}, ""},
		{"no access mode", func(c *corev1.PersistentVolumeClaim) { c.Spec.AccessModes = nil }, "spec.accessModes: FieldValueRequired"},
		{"an unknown access mode", func(c *corev1.PersistentVolumeClaim) {
			c.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{"ReadWriteSometimes"}
		}, "spec.accessModes: FieldValueNotSupported"},
		{"ReadWriteOncePod with another", func(c *corev1.PersistentVolumeClaim) {
			c.Spec.AccessModes = append(c.Spec.AccessModes, corev1.ReadWriteOncePod)
		}, "spec.accessModes: FieldValueForbidden"},
		{"no size", func(c *corev1.PersistentVolumeClaim) { c.Spec.Resources.Requests = nil }, "spec.resources[storage]: FieldValueRequired"},
		{"size 0", func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("0")
		}, "spec.resources[storage]: FieldValueInvalid"},
		{"a bad class name", func(c *corev1.PersistentVolumeClaim) { c.Spec.StorageClassName = strPtr("Fast_SSD") }, "spec.storageClassName: FieldValueInvalid"},
	})
	old := newClaim()
	grown := old.DeepCopy()
	grown.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
	if got := fieldPaths(validatePersistentVolumeClaimUpdate(grown, old)); got != "spec: FieldValueForbidden" {
		t.Errorf("resizing an unbound claim: got %q", got)
	}
	old.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}
	grown.Status = old.Status
	if errs := validatePersistentVolumeClaimUpdate(grown, old); len(errs) != 0 {
		t.Errorf("growing a bound claim: %v", errs)
	}
	shrunk := old.DeepCopy()
	shrunk.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("512Mi")
	if got := fieldPaths(validatePersistentVolumeClaimUpdate(shrunk, old)); got != "spec.resources.requests.storage: FieldValueForbidden" {
		t.Errorf("shrinking below the capacity: got %q", got)
	}
}

func newVolume() *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv"}, Spec: corev1.PersistentVolumeSpec{
		AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")},
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}}}}
}

func TestPersistentVolumeValidation(t *testing.T) {
	checkValidation(t, newVolume, validatePersistentVolume, []validationCase[*corev1.PersistentVolume]{
		{"a valid volume", func(*corev1.PersistentVolume) {}, ""},
		{"no access mode", func(v *corev1.PersistentVolume) { v.Spec.AccessModes = nil }, "spec.accessModes: FieldValueRequired"},
		{"no capacity", func(v *corev1.PersistentVolume) { v.Spec.Capacity = nil }, "spec.capacity: FieldValueRequired"},
		{"capacity other than storage", func(v *corev1.PersistentVolume) {
			v.Spec.Capacity = corev1.ResourceList{"cpu": resource.MustParse("1")}
		}, "spec.capacity: FieldValueNotSupported"},
		{"no volume type", func(v *corev1.PersistentVolume) { v.Spec.HostPath = nil }, "spec: FieldValueRequired"},
		{"two volume types", func(v *corev1.PersistentVolume) {
			v.Spec.NFS = &corev1.NFSVolumeSource{Server: "nfs", Path: "/x"}
		}, "FieldValueForbidden"},
		{"a hostPath without a path", func(v *corev1.PersistentVolume) { v.Spec.HostPath.Path = "" }, "spec.hostPath.path: FieldValueRequired"},
		{"an unknown reclaim policy", func(v *corev1.PersistentVolume) { v.Spec.PersistentVolumeReclaimPolicy = "Keep" }, "spec.persistentVolumeReclaimPolicy: FieldValueNotSupported"},
	})
	old := newVolume()
	moved := old.DeepCopy()
	moved.Spec.HostPath.Path = "/elsewhere"
	if got := fieldPaths(validatePersistentVolumeUpdate(moved, old)); got != "spec.persistentvolumesource: FieldValueForbidden" {
		t.Errorf("changing the source: got %q", got)
	}
}

func newQuota() *corev1.ResourceQuota {
	return &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
		"pods": resource.MustParse("10"), "requests.cpu": resource.MustParse("500m"), "count/deployments.apps": resource.MustParse("3"),
		"requests.example.com/gpu": resource.MustParse("2")}}}
}

func TestResourceQuotaValidation(t *testing.T) {
	checkValidation(t, newQuota, validateResourceQuota, []validationCase[*corev1.ResourceQuota]{
		{"a valid quota", func(*corev1.ResourceQuota) {}, ""},
		{"an unknown resource", func(q *corev1.ResourceQuota) { q.Spec.Hard["potatoes"] = resource.MustParse("1") }, "spec.hard[potatoes]: FieldValueInvalid"},
		{"a negative amount", func(q *corev1.ResourceQuota) { q.Spec.Hard["pods"] = resource.MustParse("-1") }, "spec.hard[pods]: FieldValueInvalid"},
		{"half a pod", func(q *corev1.ResourceQuota) { q.Spec.Hard["pods"] = resource.MustParse("1500m") }, "spec.hard[pods]: FieldValueInvalid"},
		{"an unknown scope", func(q *corev1.ResourceQuota) { q.Spec.Scopes = []corev1.ResourceQuotaScope{"Sometimes"} }, "spec.scopes: FieldValueInvalid"},
		{"conflicting scopes", func(q *corev1.ResourceQuota) {
			q.Spec.Hard = corev1.ResourceList{"pods": resource.MustParse("1")}
			q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort}
		}, "spec.scopes: FieldValueInvalid"},
		{"a scope that cannot limit a resource", func(q *corev1.ResourceQuota) {
			q.Spec.Hard = corev1.ResourceList{"secrets": resource.MustParse("1")}
			q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating}
		}, "spec.scopes: FieldValueInvalid"},
	})
}

func newLimitRange() *corev1.LimitRange {
	return &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "lr"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type: corev1.LimitTypeContainer,
		Min:  corev1.ResourceList{"cpu": resource.MustParse("100m")}, Max: corev1.ResourceList{"cpu": resource.MustParse("2")},
		Default: corev1.ResourceList{"cpu": resource.MustParse("500m")}, DefaultRequest: corev1.ResourceList{"cpu": resource.MustParse("200m")},
	}}}}
}

func TestLimitRangeValidation(t *testing.T) {
	checkValidation(t, newLimitRange, validateLimitRange, []validationCase[*corev1.LimitRange]{
		{"a valid range", func(*corev1.LimitRange) {}, ""},
		{"min above max", func(lr *corev1.LimitRange) { lr.Spec.Limits[0].Min["cpu"] = resource.MustParse("3") }, "spec.limits[0].min[cpu]: FieldValueInvalid"},
		{"default above max", func(lr *corev1.LimitRange) { lr.Spec.Limits[0].Default["cpu"] = resource.MustParse("4") }, "spec.limits[0].default[cpu]: FieldValueInvalid"},
		{"request above default", func(lr *corev1.LimitRange) { lr.Spec.Limits[0].DefaultRequest["cpu"] = resource.MustParse("1") }, "spec.limits[0].defaultRequest[cpu]: FieldValueInvalid"},
		{"a ratio below 1", func(lr *corev1.LimitRange) {
			lr.Spec.Limits[0].MaxLimitRequestRatio = corev1.ResourceList{"cpu": resource.MustParse("500m")}
		}, "spec.limits[0].maxLimitRequestRatio[cpu]: FieldValueInvalid"},
		{"an unknown type", func(lr *corev1.LimitRange) { lr.Spec.Limits[0].Type = "Node" }, "spec.limits[0].type: FieldValueInvalid"},
		{"a type twice", func(lr *corev1.LimitRange) { lr.Spec.Limits = append(lr.Spec.Limits, lr.Spec.Limits[0]) }, "spec.limits[1].type: FieldValueDuplicate"},
		{"a default on a Pod item", func(lr *corev1.LimitRange) { lr.Spec.Limits[0].Type = corev1.LimitTypePod }, "spec.limits[0].default: FieldValueForbidden"},
		{"a claim item without storage", func(lr *corev1.LimitRange) {
			lr.Spec.Limits = []corev1.LimitRangeItem{{Type: corev1.LimitTypePersistentVolumeClaim}}
		}, "spec.limits[0].limits: FieldValueRequired"},
		{"a container resource that is not one", func(lr *corev1.LimitRange) { lr.Spec.Limits[0].Max["storage"] = resource.MustParse("1Gi") }, "spec.limits[0].max[storage]: FieldValueInvalid"},
	})
}

func newNetworkPolicy() *networkingv1.NetworkPolicy {
	tcp, port := corev1.ProtocolTCP, intstr.FromInt32(80)
	return &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "np"}, Spec: networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Ingress: []networkingv1.NetworkPolicyIngressRule{{
			Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}},
			From:  []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/16", Except: []string{"10.0.1.0/24"}}}},
		}},
	}}
}

func TestNetworkPolicyValidation(t *testing.T) {
	checkValidation(t, newNetworkPolicy, validateNetworkPolicy, []validationCase[*networkingv1.NetworkPolicy]{
		{"a valid policy", func(*networkingv1.NetworkPolicy) {}, ""},
		{"port 0", func(np *networkingv1.NetworkPolicy) { p := intstr.FromInt32(0); np.Spec.Ingress[0].Ports[0].Port = &p }, "spec.ingress[0].ports[0].port: FieldValueInvalid"},
		{"endPort below port", func(np *networkingv1.NetworkPolicy) { e := int32(79); np.Spec.Ingress[0].Ports[0].EndPort = &e }, "spec.ingress[0].ports[0].endPort: FieldValueInvalid"},
		{"endPort after a named port", func(np *networkingv1.NetworkPolicy) {
			p, e := intstr.FromString("http"), int32(90)
			np.Spec.Ingress[0].Ports[0].Port, np.Spec.Ingress[0].Ports[0].EndPort = &p, &e
		}, "spec.ingress[0].ports[0].endPort: FieldValueInvalid"},
		{"an unknown protocol", func(np *networkingv1.NetworkPolicy) {
			icmp := corev1.Protocol("ICMP")
			np.Spec.Ingress[0].Ports[0].Protocol = &icmp
		}, "spec.ingress[0].ports[0].protocol: FieldValueNotSupported"},
		{"an empty peer", func(np *networkingv1.NetworkPolicy) { np.Spec.Ingress[0].From[0].IPBlock = nil }, "spec.ingress[0].from[0]: FieldValueRequired"},
		{"ipBlock beside a selector", func(np *networkingv1.NetworkPolicy) {
			np.Spec.Ingress[0].From[0].PodSelector = &metav1.LabelSelector{}
		}, "spec.ingress[0].from[0]: FieldValueForbidden"},
		{"a bad CIDR", func(np *networkingv1.NetworkPolicy) { np.Spec.Ingress[0].From[0].IPBlock.CIDR = "10.0.0.0/33" }, "spec.ingress[0].from[0].ipBlock.cidr: FieldValueInvalid"},
		{"an exception outside the CIDR", func(np *networkingv1.NetworkPolicy) {
			np.Spec.Ingress[0].From[0].IPBlock.Except = []string{"192.168.0.0/24"}
		}, "spec.ingress[0].from[0].ipBlock.except[0]: FieldValueInvalid"},
		{"an unknown policy type", func(np *networkingv1.NetworkPolicy) { np.Spec.PolicyTypes = []networkingv1.PolicyType{"Sideways"} }, "spec.policyTypes[0]: FieldValueNotSupported"},
	})
}

func newHPA() *autoscalingv2.HorizontalPodAutoscaler {
	hpa := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		MaxReplicas: 5, ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}}
	defaultHPA(hpa)
	return hpa
}

func TestHorizontalPodAutoscalerValidation(t *testing.T) {
	checkValidation(t, newHPA, validateHPA, []validationCase[*autoscalingv2.HorizontalPodAutoscaler]{
		{"a valid autoscaler", func(*autoscalingv2.HorizontalPodAutoscaler) {}, ""},
		{"no maxReplicas", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MaxReplicas = 0 }, "spec.maxReplicas: FieldValueInvalid"},
		{"min above max", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MinReplicas = int32Ptr(6) }, "spec.maxReplicas: FieldValueInvalid"},
		{"minReplicas 0", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MinReplicas = int32Ptr(0) }, "spec.minReplicas: FieldValueInvalid"},
		{"no target kind", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.ScaleTargetRef.Kind = "" }, "spec.scaleTargetRef.kind: FieldValueRequired"},
		{"no target name", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.ScaleTargetRef.Name = "" }, "spec.scaleTargetRef.name: FieldValueRequired"},
		{"utilization 0", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].Resource.Target.AverageUtilization = int32Ptr(0)
		}, "spec.metrics[0].resource.target.averageUtilization: FieldValueInvalid"},
		{"a metric without its source", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.Metrics[0].Resource = nil }, "spec.metrics[0]: FieldValueRequired"},
		{"an unknown metric type", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.Metrics[0].Type = "Mood" }, "spec.metrics[0].type: FieldValueNotSupported"},
		{"a scaling period too long", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{
				Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 3600}}}}
		}, "spec.behavior.scaleUp.policies[0].periodSeconds: FieldValueInvalid"},
	})
}
