package kinds

// Pods: upstream's core/v1 defaulting for pods, the pod strategy's create,
// update and graceful-delete rules, and a small part of its validation.

import (
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// podSelectableFields are upstream's pod fields for field selectors.
func podSelectableFields(obj runtime.Object) fields.Set {
	pod := obj.(*corev1.Pod)
	set := make(fields.Set, 8+registry.MetadataFieldCount) // one allocation, metadata fields included
	set["spec.nodeName"] = pod.Spec.NodeName
	set["spec.restartPolicy"] = string(pod.Spec.RestartPolicy)
	set["spec.schedulerName"] = pod.Spec.SchedulerName
	set["spec.serviceAccountName"] = pod.Spec.ServiceAccountName
	set["spec.hostNetwork"] = strconv.FormatBool(pod.Spec.HostNetwork)
	set["status.phase"] = string(pod.Status.Phase)
	set["status.podIP"] = pod.Status.PodIP
	set["status.nominatedNodeName"] = pod.Status.NominatedNodeName
	return set
}

// podsEntry describes the pods resource (core/v1 Pod).
func podsEntry() *registry.Resource {
	return entry(apigroups.CoreV1, "pods", "Pod", true, "/registry/pods",
		func() runtime.Object { return &corev1.Pod{} }, func() runtime.Object { return &corev1.PodList{} },
		&registry.Resource{ShortNames: []string{"po"}, Categories: []string{"all"}, Strategy: podStrategy,
			Subresources: []string{"status"}, ContainerSubresources: []string{"log", "exec", "attach", "portforward"},
			SelectableFields: podSelectableFields,
			// A kubelet lists and watches only its own pods.
			Indexes:        []registry.Index{{Field: "spec.nodeName", Value: func(obj runtime.Object) string { return obj.(*corev1.Pod).Spec.NodeName }}},
			WatchCacheSize: 5000,
			Printer:        podPrinter})
}

var podStrategy = &rest.Strategy{
	ValidateName: validation.NameIsDNSSubdomain,
	PrepareForCreate: func(obj runtime.Object) {
		pod := obj.(*corev1.Pod)
		defaultPod(pod)
		pod.Generation = 1
		pod.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: podQOSClass(pod)}
	},
	PrepareForUpdate: func(obj, old runtime.Object) {
		pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
		defaultPod(pod)
		pod.Status = oldPod.Status
		if !equality.Semantic.DeepEqual(pod.Spec, oldPod.Spec) {
			pod.Generation = oldPod.Generation + 1
		}
	},
	PrepareForStatusUpdate: func(obj, old runtime.Object) {
		obj.(*corev1.Pod).Spec = old.(*corev1.Pod).Spec
	},
	Validate:       func(obj runtime.Object) field.ErrorList { return validatePodSpec(&obj.(*corev1.Pod).Spec) },
	ValidateUpdate: validatePodUpdate,
	GracePeriod:    podGracePeriod,
}

// podGracePeriod is how long a deleted pod stays Terminating, as upstream's
// pod strategy decides: the request's gracePeriodSeconds, else the pod's
// spec.terminationGracePeriodSeconds; 0 for a pod no kubelet runs (not
// bound to a node) or that has finished (Succeeded, Failed), which go at
// once. The kubelet of the pod's node ends a graceful deletion with a
// DELETE of grace 0.
func podGracePeriod(obj runtime.Object, requested *int64) int64 {
	pod := obj.(*corev1.Pod)
	var period int64
	switch {
	case requested != nil:
		period = *requested
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		period = *pod.Spec.TerminationGracePeriodSeconds
	}
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		period = 0
	}
	if period < 0 {
		period = 1
	}
	return period
}

// defaultPod fills what upstream's defaulting fills when a pod is decoded:
// its spec as any pod template's, plus what only pods get (service links,
// and requests copied from limits).
func defaultPod(pod *corev1.Pod) {
	spec := &pod.Spec
	defaultPodSpec(spec)
	if spec.EnableServiceLinks == nil {
		enable := corev1.DefaultEnableServiceLinks
		spec.EnableServiceLinks = &enable
	}
	for i := range spec.InitContainers {
		requestLimits(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		requestLimits(&spec.Containers[i])
	}
}

// defaultPodSpec fills what upstream defaults in every pod spec, a pod's
// or a template's (a Deployment's, a Job's, ...).
func defaultPodSpec(spec *corev1.PodSpec) {
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = corev1.DefaultSchedulerName
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	if spec.TerminationGracePeriodSeconds == nil {
		period := int64(corev1.DefaultTerminationGracePeriodSeconds)
		spec.TerminationGracePeriodSeconds = &period
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i])
	}
}

// requestLimits makes a limit without a request request the limit: pods
// only, not templates, as upstream.
func requestLimits(c *corev1.Container) {
	for name, limit := range c.Resources.Limits {
		if _, ok := c.Resources.Requests[name]; !ok {
			if c.Resources.Requests == nil {
				c.Resources.Requests = corev1.ResourceList{}
			}
			c.Resources.Requests[name] = limit.DeepCopy()
		}
	}
}

func defaultContainer(c *corev1.Container) {
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = defaultPullPolicy(c.Image)
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		defaultProbe(p)
	}
}

func defaultProbe(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
}

// defaultPullPolicy is Always for ":latest" or untagged images, else
// IfNotPresent. An image pinned by digest alone has no tag: IfNotPresent.
func defaultPullPolicy(image string) corev1.PullPolicy {
	name, digest, _ := strings.Cut(image, "@")
	lastPart := name[strings.LastIndex(name, "/")+1:]
	_, tag, hasTag := strings.Cut(lastPart, ":")
	switch {
	case hasTag && tag == "latest", !hasTag && digest == "":
		return corev1.PullAlways
	default:
		return corev1.PullIfNotPresent
	}
}

// podQOSClass computes status.qosClass from cpu and memory: BestEffort when
// no container asks for either, Guaranteed when every container limits both
// and requests exactly its limits, Burstable otherwise.
func podQOSClass(pod *corev1.Pod) corev1.PodQOSClass {
	containers := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	anyResource, guaranteed := false, true
	for _, c := range containers {
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, hasReq := c.Resources.Requests[name]
			lim, hasLim := c.Resources.Limits[name]
			if (hasReq && !req.IsZero()) || (hasLim && !lim.IsZero()) {
				anyResource = true
			}
			if !hasLim || !hasReq || req.Cmp(lim) != 0 {
				guaranteed = false
			}
		}
	}
	switch {
	case !anyResource:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	default:
		return corev1.PodQOSBurstable
	}
}

// validatePodSpec is minicp's subset of upstream's pod validation.
func validatePodSpec(spec *corev1.PodSpec) field.ErrorList {
	return validatePodSpecAt(spec, field.NewPath("spec"))
}

// validatePodSpecAt validates the pod spec at path ("spec" in a pod,
// "spec.template.spec" in a Deployment).
func validatePodSpecAt(spec *corev1.PodSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Containers) == 0 {
		errs = append(errs, field.Required(path.Child("containers"), ""))
	}
	names := sets.New[string]()
	errs = append(errs, validateContainers(spec.InitContainers, names, path.Child("initContainers"))...)
	errs = append(errs, validateContainers(spec.Containers, names, path.Child("containers"))...)

	restartPolicies := []corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}
	if !contains(restartPolicies, spec.RestartPolicy) {
		errs = append(errs, field.NotSupported(path.Child("restartPolicy"), spec.RestartPolicy, restartPolicies))
	}
	dnsPolicies := []corev1.DNSPolicy{corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone}
	if !contains(dnsPolicies, spec.DNSPolicy) {
		errs = append(errs, field.NotSupported(path.Child("dnsPolicy"), spec.DNSPolicy, dnsPolicies))
	}
	if spec.NodeName != "" {
		for _, msg := range validation.NameIsDNSSubdomain(spec.NodeName, false) {
			errs = append(errs, field.Invalid(path.Child("nodeName"), spec.NodeName, msg))
		}
	}
	return errs
}

// validateContainers checks names (DNS-1123 labels, unique across init and
// regular containers: names collects them), images and ports.
func validateContainers(containers []corev1.Container, names sets.Set[string], path *field.Path) field.ErrorList {
	var errs field.ErrorList
	pullPolicies := []corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever}
	for i, c := range containers {
		p := path.Index(i)
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(p.Child("name"), ""))
		case names.Has(c.Name):
			errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
		default:
			for _, msg := range utilvalidation.IsDNS1123Label(c.Name) {
				errs = append(errs, field.Invalid(p.Child("name"), c.Name, msg))
			}
		}
		names.Insert(c.Name)
		if strings.TrimSpace(c.Image) == "" {
			errs = append(errs, field.Required(p.Child("image"), ""))
		}
		if !contains(pullPolicies, c.ImagePullPolicy) {
			errs = append(errs, field.NotSupported(p.Child("imagePullPolicy"), c.ImagePullPolicy, pullPolicies))
		}
		for j, port := range c.Ports {
			for _, msg := range utilvalidation.IsValidPortNum(int(port.ContainerPort)) {
				errs = append(errs, field.Invalid(p.Child("ports").Index(j).Child("containerPort"), port.ContainerPort, msg))
			}
		}
	}
	return errs
}

// podUpdateForbiddenMsg is upstream's refusal of a pod spec change.
const podUpdateForbiddenMsg = "pod updates may not change fields other than `spec.containers[*].image`," +
	"`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations)," +
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"

// validatePodUpdate refuses spec changes other than the few upstream allows
// on a running pod (images, deadline, tolerations, grace period).
func validatePodUpdate(obj, old runtime.Object) field.ErrorList {
	spec, oldSpec := obj.(*corev1.Pod).Spec.DeepCopy(), &old.(*corev1.Pod).Spec
	for i := range spec.Containers {
		if i < len(oldSpec.Containers) {
			spec.Containers[i].Image = oldSpec.Containers[i].Image
		}
	}
	for i := range spec.InitContainers {
		if i < len(oldSpec.InitContainers) {
			spec.InitContainers[i].Image = oldSpec.InitContainers[i].Image
		}
	}
	spec.ActiveDeadlineSeconds = oldSpec.ActiveDeadlineSeconds
	spec.Tolerations = oldSpec.Tolerations
	spec.TerminationGracePeriodSeconds = oldSpec.TerminationGracePeriodSeconds
	if !equality.Semantic.DeepEqual(spec, oldSpec) {
		return field.ErrorList{field.Forbidden(field.NewPath("spec"), podUpdateForbiddenMsg)}
	}
	return nil
}
