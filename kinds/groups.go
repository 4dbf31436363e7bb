package kinds

// The group versions the built-in kinds are served at.

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
)

var coreV1 = corev1.SchemeGroupVersion

var coordinationV1 = coordinationv1.SchemeGroupVersion

var appsV1 = appsv1.SchemeGroupVersion

var batchV1 = batchv1.SchemeGroupVersion

var autoscalingV2 = autoscalingv2.SchemeGroupVersion

var eventsV1 = eventsv1.SchemeGroupVersion

var rbacV1 = rbacv1.SchemeGroupVersion

var networkingV1 = networkingv1.SchemeGroupVersion

var policyV1 = policyv1.SchemeGroupVersion

var discoveryV1 = discoveryv1.SchemeGroupVersion

var schedulingV1 = schedulingv1.SchemeGroupVersion

var storageV1 = storagev1.SchemeGroupVersion

var admissionregistrationV1 = admissionregistrationv1.SchemeGroupVersion
