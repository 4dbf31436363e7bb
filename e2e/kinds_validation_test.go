package e2e

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"minicp/controlplane"
	"minicp/e2e/framework"
)

// Invalid CronJobs, claims, volumes, quotas, limit ranges, network
// policies and autoscalers are answered 422 with the offending field as
// the cause, and nothing is written to etcd.
func TestInvalidObjectsOfTheOtherKindsGet422WithTheirField(t *testing.T) {
	s := framework.Start(t, framework.Options{})
	ctx := framework.Context(t, 60*time.Second)
	cs := s.Clientset
	ns := metav1.NamespaceDefault
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }
	cronJob := func(name, schedule string, tz *string) *batchv1.CronJob {
		cj := &batchv1.CronJob{ObjectMeta: meta(name), Spec: batchv1.CronJobSpec{Schedule: schedule, TimeZone: tz,
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: webDeployment(name).Spec.Template}}}}
		cj.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		return cj
	}
	mars := "Mars/Olympus_Mons"
	gi := resource.MustParse("1Gi")
	for _, tc := range []struct {
		name, key, cause string
		create           func(cs kubernetes.Interface, ctx context.Context) error
	}{
		{"a minute out of range", "/registry/cronjobs/default/cj-minute", "spec.schedule", func(cs kubernetes.Interface, ctx context.Context) error {
			_, err := cs.BatchV1().CronJobs(ns).Create(ctx, cronJob("cj-minute", "61 * * * *", nil), metav1.CreateOptions{})
			return err
		}},
		{"an unknown time zone", "/registry/cronjobs/default/cj-zone", "spec.timeZone", func(cs kubernetes.Interface, ctx context.Context) error {
			_, err := cs.BatchV1().CronJobs(ns).Create(ctx, cronJob("cj-zone", "0 * * * *", &mars), metav1.CreateOptions{})
			return err
		}},
		{"TZ= in a schedule", "/registry/cronjobs/default/cj-tz", "spec.schedule", func(cs kubernetes.Interface, ctx context.Context) error {
			_, err := cs.BatchV1().CronJobs(ns).Create(ctx, cronJob("cj-tz", "CRON_TZ=UTC 0 * * * *", nil), metav1.CreateOptions{})
			return err
		}},
		{"a claim without a size", "/registry/persistentvolumeclaims/default/pvc-nosize", "spec.resources[storage]", func(cs kubernetes.Interface, ctx context.Context) error {
			_, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: meta("pvc-nosize"),
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}}}, metav1.CreateOptions{})
			return err
		}},
		{"a volume of no type", "/registry/persistentvolumes/pv-notype", "spec", func(cs kubernetes.Interface, ctx context.Context) error {
			_, err := cs.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{ObjectMeta: meta("pv-notype"),
				Spec: corev1.PersistentVolumeSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Capacity: corev1.ResourceList{corev1.ResourceStorage: gi}}}, metav1.CreateOptions{})
			return err
		}},
		{"a quota on an unknown resource", "/registry/resourcequotas/default/rq-potatoes", "spec.hard[potatoes]", func(cs kubernetes.Interface, ctx context.Context) error {
			_, err := cs.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{ObjectMeta: meta("rq-potatoes"),
				Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"potatoes": resource.MustParse("3")}}}, metav1.CreateOptions{})
			return err
		}},
		{"a limit range whose min is above its max", "/registry/limitranges/default/lr-order", "spec.limits[0].min[cpu]", func(cs kubernetes.Interface, ctx context.Context) error {
			_, err := cs.CoreV1().LimitRanges(ns).Create(ctx, &corev1.LimitRange{ObjectMeta: meta("lr-order"),
				Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
					Min: corev1.ResourceList{"cpu": resource.MustParse("2")}, Max: corev1.ResourceList{"cpu": resource.MustParse("1")}}}}}, metav1.CreateOptions{})
			return err
		}},
		{"a network policy with a bad CIDR", "/registry/networkpolicies/default/np-cidr", "spec.ingress[0].from[0].ipBlock.cidr", func(cs kubernetes.Interface, ctx context.Context) error {
			_, err := cs.NetworkingV1().NetworkPolicies(ns).Create(ctx, &networkingv1.NetworkPolicy{ObjectMeta: meta("np-cidr"),
				Spec: networkingv1.NetworkPolicySpec{Ingress: []networkingv1.NetworkPolicyIngressRule{{
					From: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/33"}}}}}}}, metav1.CreateOptions{})
			return err
		}},
		{"an autoscaler whose max is below its min", "/registry/horizontalpodautoscalers/default/hpa-bounds", "spec.maxReplicas", func(cs kubernetes.Interface, ctx context.Context) error {
			minReplicas := int32(3)
			_, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: meta("hpa-bounds"),
				Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: &minReplicas, MaxReplicas: 2,
					ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}}, metav1.CreateOptions{})
			return err
		}},
	} {
		err := tc.create(cs, ctx)
		if !apierrors.IsInvalid(err) {
			t.Errorf("%s: got %v, want 422 Invalid", tc.name, err)
			continue
		}
		var fields []string
		if status, ok := err.(apierrors.APIStatus); ok && status.Status().Details != nil {
			for _, c := range status.Status().Details.Causes {
				fields = append(fields, c.Field)
			}
		}
		if !slices.Contains(fields, tc.cause) {
			t.Errorf("%s: causes name %v, want %s (%v)", tc.name, fields, tc.cause, err)
		}
		if resp, err := s.Etcd.Get(ctx, tc.key); err != nil || len(resp.Kvs) != 0 {
			t.Errorf("%s: %s is in etcd after a refused create (%v)", tc.name, tc.key, err)
		}
	}
}

// With an IPv6 --service-cluster-ip-range, Services (the kubernetes
// Service first) get IPv6 ClusterIPs and say IPv6 in ipFamilies; a
// dual-stack request is refused with 422 on its field, as upstream does on
// a single-stack cluster.
func TestAnIPv6ServiceRangeGivesIPv6ClusterIPs(t *testing.T) {
	const cidr = "fd00:10:96::/112"
	s := framework.Start(t, framework.Options{Configure: func(cfg *controlplane.Config) { cfg.ServiceClusterIPRange = cidr }})
	ctx := framework.Context(t, 30*time.Second)
	services := s.Clientset.CoreV1().Services(metav1.NamespaceDefault)
	kube, err := services.Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil || kube.Spec.ClusterIP != "fd00:10:96::1" || !slices.Equal(kube.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv6Protocol}) {
		t.Fatalf("the kubernetes Service: %+v, %v", kube, err)
	}
	_, v6, _ := net.ParseCIDR(cidr)
	svc, err := services.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
	if err != nil || !v6.Contains(net.ParseIP(svc.Spec.ClusterIP)) || !slices.Equal(svc.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv6Protocol}) {
		t.Fatalf("a new Service: %+v, %v", svc, err)
	}
	require := corev1.IPFamilyPolicyRequireDualStack
	_, err = services.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "dual"},
		Spec: corev1.ServiceSpec{IPFamilyPolicy: &require, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.ipFamilyPolicy") {
		t.Fatalf("RequireDualStack: got %v, want 422 on spec.ipFamilyPolicy", err)
	}
	for name, want := range map[string]int{"web": 1, "dual": 0} {
		if resp, err := s.Etcd.Get(ctx, "/registry/services/specs/default/"+name); err != nil || len(resp.Kvs) != want {
			t.Fatalf("%s: %d keys in etcd, want %d (%v)", name, len(resp.Kvs), want, err)
		}
	}
}
