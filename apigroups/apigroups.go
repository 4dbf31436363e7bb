// Package apigroups is the one list of the API group versions of minicp's
// built-in kinds, each with the function that adds its Go types to a
// scheme. registry builds its Scheme from All, and package kinds names the
// group version of each entry from the variables below, so serving a new
// group is one line here (and its kinds in package kinds).
//
// It depends on nothing of minicp's, so that registry (and whatever reads
// registry's Scheme) can read it without linking the kinds' rules.
package apigroups

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
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
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is one group version and how its Go types join a scheme.
type GroupVersion struct {
	schema.GroupVersion
	AddToScheme func(*runtime.Scheme) error
}

// The group versions the built-in kinds are served at.
var (
	CoreV1                  = corev1.SchemeGroupVersion
	CoordinationV1          = coordinationv1.SchemeGroupVersion
	AppsV1                  = appsv1.SchemeGroupVersion
	BatchV1                 = batchv1.SchemeGroupVersion
	AutoscalingV1           = autoscalingv1.SchemeGroupVersion // the Scale of the scale subresource
	AutoscalingV2           = autoscalingv2.SchemeGroupVersion
	EventsV1                = eventsv1.SchemeGroupVersion
	RBACV1                  = rbacv1.SchemeGroupVersion
	NetworkingV1            = networkingv1.SchemeGroupVersion
	PolicyV1                = policyv1.SchemeGroupVersion
	DiscoveryV1             = discoveryv1.SchemeGroupVersion
	SchedulingV1            = schedulingv1.SchemeGroupVersion
	StorageV1               = storagev1.SchemeGroupVersion
	AdmissionregistrationV1 = admissionregistrationv1.SchemeGroupVersion
	ApiextensionsV1         = apiextensionsv1.SchemeGroupVersion
)

// All is every group version above with its scheme function.
var All = []GroupVersion{
	{CoreV1, corev1.AddToScheme},
	{CoordinationV1, coordinationv1.AddToScheme},
	{AppsV1, appsv1.AddToScheme},
	{BatchV1, batchv1.AddToScheme},
	{AutoscalingV1, autoscalingv1.AddToScheme},
	{AutoscalingV2, autoscalingv2.AddToScheme},
	{EventsV1, eventsv1.AddToScheme},
	{RBACV1, rbacv1.AddToScheme},
	{NetworkingV1, networkingv1.AddToScheme},
	{PolicyV1, policyv1.AddToScheme},
	{DiscoveryV1, discoveryv1.AddToScheme},
	{SchedulingV1, schedulingv1.AddToScheme},
	{StorageV1, storagev1.AddToScheme},
	{AdmissionregistrationV1, admissionregistrationv1.AddToScheme},
	{ApiextensionsV1, apiextensionsv1.AddToScheme},
}
