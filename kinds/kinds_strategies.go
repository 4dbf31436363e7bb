package kinds

// The registry.Strategy of each built-in kind beyond pods, namespaces, nodes,
// config maps, events and leases: the kinds_*.go defaults and validation,
// with the spec/status/generation rules of generation.go, assembled once
// per kind by kindStrategy.

import (
	"reflect"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
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
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minicp/registry"
)

// kindRules are one kind's own rules, typed.
type kindRules[T runtime.Object] struct {
	// name validates metadata.name; nil: a DNS subdomain.
	name validation.ValidateNameFunc
	// defaults fills what upstream defaults, on create and on update.
	defaults func(T)
	// validate and validateUpdate are the kind's checks beyond metadata.
	validate       func(T) field.ErrorList
	validateUpdate func(obj, old T) field.ErrorList
}

// kindStrategy assembles a Strategy: defaults, then the generic spec and
// status rules (a new object has generation 1 and no status; an update
// keeps the status and bumps the generation when the spec changed; a
// status update keeps the spec, for kinds with a status).
func kindStrategy[T runtime.Object](r kindRules[T]) *registry.Strategy {
	st := &registry.Strategy{ValidateName: r.name}
	if st.ValidateName == nil {
		st.ValidateName = validation.NameIsDNSSubdomain
	}
	st.PrepareForCreate = func(obj runtime.Object) {
		if r.defaults != nil {
			r.defaults(obj.(T))
		}
		createWithGeneration(obj)
	}
	st.PrepareForUpdate = func(obj, old runtime.Object) {
		if r.defaults != nil {
			r.defaults(obj.(T))
		}
		updateWithGeneration(obj, old)
	}
	if hasField(newOf[T](), "Status") {
		st.PrepareForStatusUpdate = updateStatusOnly
	}
	if r.validate != nil {
		st.Validate = func(obj runtime.Object) field.ErrorList { return r.validate(obj.(T)) }
	}
	if r.validateUpdate != nil {
		st.ValidateUpdate = func(obj, old runtime.Object) field.ErrorList { return r.validateUpdate(obj.(T), old.(T)) }
	}
	return st
}

// orphaning makes DELETE orphan the dependents by default.
func orphaning(st *registry.Strategy) *registry.Strategy {
	st.DefaultGCPolicy = registry.GCOrphan
	return st
}

// newOf returns an empty object of T (a pointer type).
func newOf[T runtime.Object]() runtime.Object {
	var zero T
	return reflect.New(reflect.TypeOf(zero).Elem()).Interface().(runtime.Object)
}

// rbacName is upstream's name rule for RBAC objects: any path segment
// ("system:controller:x" is a valid role name).
func rbacName(name string, prefix bool) []string { return path.IsValidPathSegmentName(name) }

var (
	deploymentStrategy = kindStrategy(kindRules[*appsv1.Deployment]{
		defaults: defaultDeployment, validate: validateDeployment,
		validateUpdate: func(d, old *appsv1.Deployment) field.ErrorList {
			return validateSelectorUnchanged(d.Spec.Selector, old.Spec.Selector)
		},
	})
	replicaSetStrategy = kindStrategy(kindRules[*appsv1.ReplicaSet]{
		defaults: defaultReplicaSet, validate: validateReplicaSet,
		validateUpdate: func(rs, old *appsv1.ReplicaSet) field.ErrorList {
			return validateSelectorUnchanged(rs.Spec.Selector, old.Spec.Selector)
		},
	})
	statefulSetStrategy = kindStrategy(kindRules[*appsv1.StatefulSet]{
		defaults: defaultStatefulSet, validate: validateStatefulSet, validateUpdate: validateStatefulSetUpdate,
	})
	daemonSetStrategy = kindStrategy(kindRules[*appsv1.DaemonSet]{
		defaults: defaultDaemonSet, validate: validateDaemonSet,
		validateUpdate: func(ds, old *appsv1.DaemonSet) field.ErrorList {
			return validateSelectorUnchanged(ds.Spec.Selector, old.Spec.Selector)
		},
	})
	controllerRevisionStrategy = kindStrategy(kindRules[*appsv1.ControllerRevision]{
		validate: validateControllerRevision, validateUpdate: validateControllerRevisionUpdate,
	})
	// As upstream, deleting a ReplicationController or a Job orphans its
	// pods unless the client asks otherwise (the legacy default).
	replicationControllerStrategy = orphaning(kindStrategy(kindRules[*corev1.ReplicationController]{
		defaults: defaultReplicationController, validate: validateReplicationController,
	}))
	jobStrategy = orphaning(kindStrategy(kindRules[*batchv1.Job]{
		defaults: defaultJob,
		// As upstream, the selector is generated while validating a new
		// Job: it needs the UID, which is set by then.
		validate: func(job *batchv1.Job) field.ErrorList {
			generateJobSelector(job)
			return validateJob(job)
		},
		validateUpdate: validateJobUpdate,
	}))
	cronJobStrategy = func() *registry.Strategy {
		st := kindStrategy(kindRules[*batchv1.CronJob]{
			defaults: defaultCronJob, validate: validateCronJob, validateUpdate: func(cj, old *batchv1.CronJob) field.ErrorList {
				return validateScheduleTimeZone(cj, old)
			},
		})
		st.ValidateCreate = func(obj runtime.Object) field.ErrorList { return validateScheduleTimeZone(obj.(*batchv1.CronJob), nil) }
		return st
	}()
	secretStrategy = kindStrategy(kindRules[*corev1.Secret]{
		defaults: defaultSecret, validate: validateSecret, validateUpdate: validateSecretUpdate,
	})
	podTemplateStrategy = kindStrategy(kindRules[*corev1.PodTemplate]{
		defaults: func(pt *corev1.PodTemplate) { defaultPodTemplate(&pt.Template) },
		validate: func(pt *corev1.PodTemplate) field.ErrorList {
			return validateTemplate(&pt.Template, nil, field.NewPath("template"))
		},
	})
	claimStrategy = kindStrategy(kindRules[*corev1.PersistentVolumeClaim]{
		defaults: func(pvc *corev1.PersistentVolumeClaim) { defaultClaimSpec(&pvc.Spec) },
		validate: validatePersistentVolumeClaim, validateUpdate: validatePersistentVolumeClaimUpdate,
	})
	volumeStrategy = kindStrategy(kindRules[*corev1.PersistentVolume]{
		defaults: defaultPersistentVolume, validate: validatePersistentVolume, validateUpdate: validatePersistentVolumeUpdate,
	})
	endpointsStrategy     = kindStrategy(kindRules[*corev1.Endpoints]{defaults: defaultEndpoints})
	endpointSliceStrategy = kindStrategy(kindRules[*discoveryv1.EndpointSlice]{defaults: defaultEndpointSlice})
	networkPolicyStrategy = kindStrategy(kindRules[*networkingv1.NetworkPolicy]{defaults: defaultNetworkPolicy, validate: validateNetworkPolicy})
	hpaStrategy           = kindStrategy(kindRules[*autoscalingv2.HorizontalPodAutoscaler]{
		name: validation.NameIsDNSSubdomain, defaults: defaultHPA, validate: validateHPA,
	})
	priorityClassStrategy     = kindStrategy(kindRules[*schedulingv1.PriorityClass]{defaults: defaultPriorityClass})
	storageClassStrategy      = kindStrategy(kindRules[*storagev1.StorageClass]{defaults: defaultStorageClass})
	csiDriverStrategy         = kindStrategy(kindRules[*storagev1.CSIDriver]{defaults: defaultCSIDriver})
	validatingWebhookStrategy = kindStrategy(kindRules[*admissionregistrationv1.ValidatingWebhookConfiguration]{defaults: defaultValidatingWebhooks})
	mutatingWebhookStrategy   = kindStrategy(kindRules[*admissionregistrationv1.MutatingWebhookConfiguration]{defaults: defaultMutatingWebhooks})
	roleStrategy              = kindStrategy(kindRules[*rbacv1.Role]{name: rbacName})
	clusterRoleStrategy       = kindStrategy(kindRules[*rbacv1.ClusterRole]{name: rbacName})
	roleBindingStrategy       = kindStrategy(kindRules[*rbacv1.RoleBinding]{
		name: rbacName, defaults: func(rb *rbacv1.RoleBinding) { defaultSubjects(rb.Subjects) },
		validateUpdate: func(rb, old *rbacv1.RoleBinding) field.ErrorList {
			return validation.ValidateImmutableField(rb.RoleRef, old.RoleRef, field.NewPath("roleRef"))
		},
	})
	clusterRoleBindingStrategy = kindStrategy(kindRules[*rbacv1.ClusterRoleBinding]{
		name: rbacName, defaults: func(rb *rbacv1.ClusterRoleBinding) { defaultSubjects(rb.Subjects) },
		validateUpdate: func(rb, old *rbacv1.ClusterRoleBinding) field.ErrorList {
			return validation.ValidateImmutableField(rb.RoleRef, old.RoleRef, field.NewPath("roleRef"))
		},
	})
	serviceAccountStrategy   = kindStrategy(kindRules[*corev1.ServiceAccount]{})
	resourceQuotaStrategy    = kindStrategy(kindRules[*corev1.ResourceQuota]{validate: validateResourceQuota})
	limitRangeStrategy       = kindStrategy(kindRules[*corev1.LimitRange]{validate: validateLimitRange})
	ingressStrategy          = kindStrategy(kindRules[*networkingv1.Ingress]{})
	ingressClassStrategy     = kindStrategy(kindRules[*networkingv1.IngressClass]{})
	pdbStrategy              = kindStrategy(kindRules[*policyv1.PodDisruptionBudget]{})
	csiNodeStrategy          = kindStrategy(kindRules[*storagev1.CSINode]{})
	volumeAttachmentStrategy = kindStrategy(kindRules[*storagev1.VolumeAttachment]{})
	eventsV1Strategy         = kindStrategy(kindRules[*eventsv1.Event]{
		validate: func(e *eventsv1.Event) field.ErrorList { return eventStrategy.Validate(coreEventFromV1(e)) },
	})
)

// newServiceStrategy returns the Services' rules, whose write hooks
// allocate from ranges. Service names are DNS-1035 labels: they become
// DNS names.
func newServiceStrategy(ranges serviceRanges) *registry.Strategy {
	st := kindStrategy(kindRules[*corev1.Service]{
		name: validation.NameIsDNS1035Label, defaults: defaultService,
		validate: validateService, validateUpdate: validateServiceUpdate,
	})
	st.BeginWrite, st.AfterDelete = ranges.beginServiceWrite, ranges.afterServiceDelete
	prepare := st.PrepareForUpdate
	st.PrepareForUpdate = func(obj, old runtime.Object) {
		keepServiceAddresses(obj.(*corev1.Service), old.(*corev1.Service))
		prepare(obj, old)
	}
	return st
}

// scaleRules serve the scale subresource of the four scalable kinds
// (scale.go).
var scaleRules = &registry.ScaleRules{
	Replicas: func(obj runtime.Object) (spec, status int32, selector string) {
		scale, err := ScaleOf(obj)
		if err != nil {
			return 0, 0, ""
		}
		return scale.Spec.Replicas, scale.Status.Replicas, scale.Status.Selector
	},
	SetReplicas: func(obj runtime.Object, replicas int32) {
		_ = ApplyScale(obj, &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: replicas}})
	},
}

func itoa(n int32) string { return strconv.FormatInt(int64(n), 10) }
