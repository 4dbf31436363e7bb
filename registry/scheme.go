package registry

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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// Scheme knows every type minicp serves, plus the meta.k8s.io types the
// HTTP layer needs (Status, WatchEvent, Table, PartialObjectMetadata, options).
var Scheme = runtime.NewScheme()

// Codecs encodes and decodes JSON, YAML and protobuf for Scheme's types.
var Codecs = serializer.NewCodecFactory(Scheme)

// ParameterCodec decodes query parameters into metav1 option structs.
var ParameterCodec = runtime.NewParameterCodec(Scheme)

func init() {
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, coordinationv1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme,
		autoscalingv1.AddToScheme, autoscalingv2.AddToScheme, eventsv1.AddToScheme, rbacv1.AddToScheme,
		networkingv1.AddToScheme, policyv1.AddToScheme, discoveryv1.AddToScheme, schedulingv1.AddToScheme,
		storagev1.AddToScheme, admissionregistrationv1.AddToScheme, apiextensionsv1.AddToScheme,
	} {
		utilruntime.Must(add(Scheme))
	}
	utilruntime.Must(metav1.AddMetaToScheme(Scheme))
	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
}
