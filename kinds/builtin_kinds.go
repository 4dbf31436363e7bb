package kinds

// The built-in kinds beyond the six minicp started with: one entry each,
// at upstream's etcd key. Their strategies are in kinds_strategies.go,
// their printers in printers_*.go.

import (
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minicp/registry"
)

// entry fills what every kind fills the same way: its names (the singular
// is the kind in lower case, the list kind Kind+"List"), scope, etcd
// prefix, empty objects, and the deletecollection verb (upstream serves it
// on every resource but namespaces). r holds the rest.
func entry(gv schema.GroupVersion, plural, kind string, namespaced bool, prefix string,
	newObj, newList func() runtime.Object, r *registry.Resource) *registry.Resource {
	r.GroupVersion, r.Name, r.Kind, r.ListKind = gv, plural, kind, kind+"List"
	r.SingularName = strings.ToLower(kind)
	r.Namespaced, r.Prefix, r.DeleteCollection = namespaced, prefix, true
	r.New, r.NewList = newObj, newList
	return r
}

// withoutDeleteCollection takes the deletecollection verb away.
func withoutDeleteCollection(r *registry.Resource) *registry.Resource {
	r.DeleteCollection = false
	return r
}

var (
	appsV1                  = appsv1.SchemeGroupVersion
	batchV1                 = batchv1.SchemeGroupVersion
	autoscalingV2           = autoscalingv2.SchemeGroupVersion
	eventsV1                = eventsv1.SchemeGroupVersion
	rbacV1                  = rbacv1.SchemeGroupVersion
	networkingV1            = networkingv1.SchemeGroupVersion
	policyV1                = policyv1.SchemeGroupVersion
	discoveryV1             = discoveryv1.SchemeGroupVersion
	schedulingV1            = schedulingv1.SchemeGroupVersion
	storageV1               = storagev1.SchemeGroupVersion
	admissionregistrationV1 = admissionregistrationv1.SchemeGroupVersion
)

// statusAndScale are the subresources of the four scalable kinds.
var statusAndScale = []string{"status", "scale"}

// replicasField selects workloads by status.replicas, as upstream does
// for ReplicaSets and ReplicationControllers.
func replicasField(replicas int32) fields.Set {
	return fields.Set{"status.replicas": itoa(replicas)}
}

// coreKinds are the core/v1 kinds beyond namespaces, nodes, pods, config
// maps and events.
func coreKinds(services serviceRanges) []*registry.Resource {
	return []*registry.Resource{
		entry(coreV1, "secrets", "Secret", true, "/registry/secrets",
			func() runtime.Object { return &corev1.Secret{} }, func() runtime.Object { return &corev1.SecretList{} },
			&registry.Resource{Strategy: secretStrategy, Printer: secretPrinter, SelectableFields: func(obj runtime.Object) fields.Set {
				return fields.Set{"type": string(obj.(*corev1.Secret).Type)}
			}}),
		// As upstream, a collection of Services cannot be deleted at once.
		withoutDeleteCollection(entry(coreV1, "services", "Service", true, "/registry/services/specs",
			func() runtime.Object { return &corev1.Service{} }, func() runtime.Object { return &corev1.ServiceList{} },
			&registry.Resource{ShortNames: []string{"svc"}, Categories: []string{"all"}, Strategy: newServiceStrategy(services),
				Subresources: []string{"status"}, Printer: servicePrinter})),
		entry(coreV1, "endpoints", "Endpoints", true, "/registry/services/endpoints",
			func() runtime.Object { return &corev1.Endpoints{} }, func() runtime.Object { return &corev1.EndpointsList{} },
			&registry.Resource{ShortNames: []string{"ep"}, Strategy: endpointsStrategy, Printer: endpointsPrinter}),
		entry(coreV1, "serviceaccounts", "ServiceAccount", true, "/registry/serviceaccounts",
			func() runtime.Object { return &corev1.ServiceAccount{} }, func() runtime.Object { return &corev1.ServiceAccountList{} },
			&registry.Resource{ShortNames: []string{"sa"}, Strategy: serviceAccountStrategy, Printer: serviceAccountPrinter}),
		entry(coreV1, "persistentvolumeclaims", "PersistentVolumeClaim", true, "/registry/persistentvolumeclaims",
			func() runtime.Object { return &corev1.PersistentVolumeClaim{} }, func() runtime.Object { return &corev1.PersistentVolumeClaimList{} },
			&registry.Resource{ShortNames: []string{"pvc"}, Strategy: claimStrategy, Subresources: []string{"status"}, Printer: claimPrinter}),
		entry(coreV1, "persistentvolumes", "PersistentVolume", false, "/registry/persistentvolumes",
			func() runtime.Object { return &corev1.PersistentVolume{} }, func() runtime.Object { return &corev1.PersistentVolumeList{} },
			&registry.Resource{ShortNames: []string{"pv"}, Strategy: volumeStrategy, Subresources: []string{"status"}, Printer: volumePrinter}),
		entry(coreV1, "podtemplates", "PodTemplate", true, "/registry/podtemplates",
			func() runtime.Object { return &corev1.PodTemplate{} }, func() runtime.Object { return &corev1.PodTemplateList{} },
			&registry.Resource{Strategy: podTemplateStrategy, Printer: podTemplatePrinter}),
		entry(coreV1, "replicationcontrollers", "ReplicationController", true, "/registry/controllers",
			func() runtime.Object { return &corev1.ReplicationController{} }, func() runtime.Object { return &corev1.ReplicationControllerList{} },
			&registry.Resource{ShortNames: []string{"rc"}, Categories: []string{"all"}, Strategy: replicationControllerStrategy,
				Subresources: statusAndScale, Scale: scaleRules, Printer: replicationControllerPrinter,
				SelectableFields: func(obj runtime.Object) fields.Set {
					return replicasField(obj.(*corev1.ReplicationController).Status.Replicas)
				}}),
		entry(coreV1, "resourcequotas", "ResourceQuota", true, "/registry/resourcequotas",
			func() runtime.Object { return &corev1.ResourceQuota{} }, func() runtime.Object { return &corev1.ResourceQuotaList{} },
			&registry.Resource{ShortNames: []string{"quota"}, Strategy: resourceQuotaStrategy, Subresources: []string{"status"}, Printer: resourceQuotaPrinter}),
		entry(coreV1, "limitranges", "LimitRange", true, "/registry/limitranges",
			func() runtime.Object { return &corev1.LimitRange{} }, func() runtime.Object { return &corev1.LimitRangeList{} },
			&registry.Resource{ShortNames: []string{"limits"}, Strategy: limitRangeStrategy, Printer: limitRangePrinter}),
	}
}

// workloadKinds are apps/v1, batch/v1 and autoscaling/v2.
func workloadKinds() []*registry.Resource {
	return []*registry.Resource{
		entry(appsV1, "deployments", "Deployment", true, "/registry/deployments",
			func() runtime.Object { return &appsv1.Deployment{} }, func() runtime.Object { return &appsv1.DeploymentList{} },
			&registry.Resource{ShortNames: []string{"deploy"}, Categories: []string{"all"}, Strategy: deploymentStrategy,
				Subresources: statusAndScale, Scale: scaleRules, Printer: deploymentPrinter}),
		entry(appsV1, "replicasets", "ReplicaSet", true, "/registry/replicasets",
			func() runtime.Object { return &appsv1.ReplicaSet{} }, func() runtime.Object { return &appsv1.ReplicaSetList{} },
			&registry.Resource{ShortNames: []string{"rs"}, Categories: []string{"all"}, Strategy: replicaSetStrategy,
				Subresources: statusAndScale, Scale: scaleRules, Printer: replicaSetPrinter,
				SelectableFields: func(obj runtime.Object) fields.Set {
					return replicasField(obj.(*appsv1.ReplicaSet).Status.Replicas)
				}}),
		entry(appsV1, "statefulsets", "StatefulSet", true, "/registry/statefulsets",
			func() runtime.Object { return &appsv1.StatefulSet{} }, func() runtime.Object { return &appsv1.StatefulSetList{} },
			&registry.Resource{ShortNames: []string{"sts"}, Categories: []string{"all"}, Strategy: statefulSetStrategy,
				Subresources: statusAndScale, Scale: scaleRules, Printer: statefulSetPrinter}),
		entry(appsV1, "daemonsets", "DaemonSet", true, "/registry/daemonsets",
			func() runtime.Object { return &appsv1.DaemonSet{} }, func() runtime.Object { return &appsv1.DaemonSetList{} },
			&registry.Resource{ShortNames: []string{"ds"}, Categories: []string{"all"}, Strategy: daemonSetStrategy,
				Subresources: []string{"status"}, Printer: daemonSetPrinter}),
		entry(appsV1, "controllerrevisions", "ControllerRevision", true, "/registry/controllerrevisions",
			func() runtime.Object { return &appsv1.ControllerRevision{} }, func() runtime.Object { return &appsv1.ControllerRevisionList{} },
			&registry.Resource{Strategy: controllerRevisionStrategy, Printer: controllerRevisionPrinter}),
		entry(batchV1, "jobs", "Job", true, "/registry/jobs",
			func() runtime.Object { return &batchv1.Job{} }, func() runtime.Object { return &batchv1.JobList{} },
			&registry.Resource{Categories: []string{"all"}, Strategy: jobStrategy, Subresources: []string{"status"}, Printer: jobPrinter,
				SelectableFields: func(obj runtime.Object) fields.Set {
					return fields.Set{"status.successful": itoa(obj.(*batchv1.Job).Status.Succeeded)}
				}}),
		entry(batchV1, "cronjobs", "CronJob", true, "/registry/cronjobs",
			func() runtime.Object { return &batchv1.CronJob{} }, func() runtime.Object { return &batchv1.CronJobList{} },
			&registry.Resource{ShortNames: []string{"cj"}, Categories: []string{"all"}, Strategy: cronJobStrategy,
				Subresources: []string{"status"}, Printer: cronJobPrinter}),
		entry(autoscalingV2, "horizontalpodautoscalers", "HorizontalPodAutoscaler", true, "/registry/horizontalpodautoscalers",
			func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} },
			func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscalerList{} },
			&registry.Resource{ShortNames: []string{"hpa"}, Categories: []string{"all"}, Strategy: hpaStrategy,
				Subresources: []string{"status"}, Printer: hpaPrinter}),
	}
}

// clusterKinds are events.k8s.io, RBAC, networking, policy, discovery,
// scheduling, storage and admission registration.
func clusterKinds() []*registry.Resource {
	return []*registry.Resource{
		entry(eventsV1, "events", "Event", true, "/registry/events",
			func() runtime.Object { return &eventsv1.Event{} }, func() runtime.Object { return &eventsv1.EventList{} },
			&registry.Resource{ShortNames: []string{"ev"}, TTL: registry.TTLEvent, AllowCreateOnUpdate: true, Strategy: eventsV1Strategy,
				StoredAs: eventsStoredAsCore, Printer: eventsV1Printer, GarbageCollectorIgnored: true}),
		entry(rbacV1, "roles", "Role", true, "/registry/roles",
			func() runtime.Object { return &rbacv1.Role{} }, func() runtime.Object { return &rbacv1.RoleList{} },
			&registry.Resource{Strategy: roleStrategy, Printer: rolePrinter}),
		entry(rbacV1, "rolebindings", "RoleBinding", true, "/registry/rolebindings",
			func() runtime.Object { return &rbacv1.RoleBinding{} }, func() runtime.Object { return &rbacv1.RoleBindingList{} },
			&registry.Resource{Strategy: roleBindingStrategy, Printer: roleBindingPrinter}),
		entry(rbacV1, "clusterroles", "ClusterRole", false, "/registry/clusterroles",
			func() runtime.Object { return &rbacv1.ClusterRole{} }, func() runtime.Object { return &rbacv1.ClusterRoleList{} },
			&registry.Resource{Strategy: clusterRoleStrategy, Printer: rolePrinter}),
		entry(rbacV1, "clusterrolebindings", "ClusterRoleBinding", false, "/registry/clusterrolebindings",
			func() runtime.Object { return &rbacv1.ClusterRoleBinding{} }, func() runtime.Object { return &rbacv1.ClusterRoleBindingList{} },
			&registry.Resource{Strategy: clusterRoleBindingStrategy, Printer: clusterRoleBindingPrinter}),
		entry(networkingV1, "ingresses", "Ingress", true, "/registry/ingress",
			func() runtime.Object { return &networkingv1.Ingress{} }, func() runtime.Object { return &networkingv1.IngressList{} },
			&registry.Resource{ShortNames: []string{"ing"}, Strategy: ingressStrategy, Subresources: []string{"status"}, Printer: ingressPrinter}),
		entry(networkingV1, "ingressclasses", "IngressClass", false, "/registry/ingressclasses",
			func() runtime.Object { return &networkingv1.IngressClass{} }, func() runtime.Object { return &networkingv1.IngressClassList{} },
			&registry.Resource{Strategy: ingressClassStrategy, Printer: ingressClassPrinter}),
		entry(networkingV1, "networkpolicies", "NetworkPolicy", true, "/registry/networkpolicies",
			func() runtime.Object { return &networkingv1.NetworkPolicy{} }, func() runtime.Object { return &networkingv1.NetworkPolicyList{} },
			&registry.Resource{ShortNames: []string{"netpol"}, Strategy: networkPolicyStrategy, Printer: networkPolicyPrinter}),
		entry(policyV1, "poddisruptionbudgets", "PodDisruptionBudget", true, "/registry/poddisruptionbudgets",
			func() runtime.Object { return &policyv1.PodDisruptionBudget{} }, func() runtime.Object { return &policyv1.PodDisruptionBudgetList{} },
			&registry.Resource{ShortNames: []string{"pdb"}, Strategy: pdbStrategy, Subresources: []string{"status"}, Printer: pdbPrinter}),
		entry(discoveryV1, "endpointslices", "EndpointSlice", true, "/registry/endpointslices",
			func() runtime.Object { return &discoveryv1.EndpointSlice{} }, func() runtime.Object { return &discoveryv1.EndpointSliceList{} },
			&registry.Resource{Strategy: endpointSliceStrategy, Printer: endpointSlicePrinter}),
		entry(schedulingV1, "priorityclasses", "PriorityClass", false, "/registry/priorityclasses",
			func() runtime.Object { return &schedulingv1.PriorityClass{} }, func() runtime.Object { return &schedulingv1.PriorityClassList{} },
			&registry.Resource{ShortNames: []string{"pc"}, Strategy: priorityClassStrategy, Printer: priorityClassPrinter}),
		entry(storageV1, "storageclasses", "StorageClass", false, "/registry/storageclasses",
			func() runtime.Object { return &storagev1.StorageClass{} }, func() runtime.Object { return &storagev1.StorageClassList{} },
			&registry.Resource{ShortNames: []string{"sc"}, Strategy: storageClassStrategy, Printer: storageClassPrinter}),
		entry(storageV1, "csidrivers", "CSIDriver", false, "/registry/csidrivers",
			func() runtime.Object { return &storagev1.CSIDriver{} }, func() runtime.Object { return &storagev1.CSIDriverList{} },
			&registry.Resource{Strategy: csiDriverStrategy, Printer: csiDriverPrinter}),
		entry(storageV1, "csinodes", "CSINode", false, "/registry/csinodes",
			func() runtime.Object { return &storagev1.CSINode{} }, func() runtime.Object { return &storagev1.CSINodeList{} },
			&registry.Resource{Strategy: csiNodeStrategy, Printer: csiNodePrinter}),
		entry(storageV1, "volumeattachments", "VolumeAttachment", false, "/registry/volumeattachments",
			func() runtime.Object { return &storagev1.VolumeAttachment{} }, func() runtime.Object { return &storagev1.VolumeAttachmentList{} },
			&registry.Resource{Strategy: volumeAttachmentStrategy, Subresources: []string{"status"}, Printer: volumeAttachmentPrinter}),
		entry(admissionregistrationV1, "validatingwebhookconfigurations", "ValidatingWebhookConfiguration", false,
			"/registry/validatingwebhookconfigurations",
			func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfiguration{} },
			func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfigurationList{} },
			&registry.Resource{Categories: []string{"api-extensions"}, Strategy: validatingWebhookStrategy, Printer: validatingWebhookPrinter}),
		entry(admissionregistrationV1, "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", false,
			"/registry/mutatingwebhookconfigurations",
			func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfiguration{} },
			func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfigurationList{} },
			&registry.Resource{Categories: []string{"api-extensions"}, Strategy: mutatingWebhookStrategy, Printer: mutatingWebhookPrinter}),
	}
}
