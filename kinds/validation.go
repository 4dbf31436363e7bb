package kinds

// What the kinds' validation and defaulting share: quantities and
// resource names, non-negative numbers, int-or-percent values, and the
// field names of error messages.

import (
	"reflect"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func int32Ptr(v int32) *int32 { return &v }

func defaultInt32(p **int32, v int32) {
	if *p == nil {
		*p = int32Ptr(v)
	}
}

// validateReplicas: a replica count is never negative.
func validateNonNegative(v *int32, path *field.Path) field.ErrorList {
	if v != nil && *v < 0 {
		return field.ErrorList{field.Invalid(path, int64(*v), "must be greater than or equal to 0")}
	}
	return nil
}

func isZero(v *intstr.IntOrString) bool {
	if v == nil {
		return true
	}
	if v.Type == intstr.Int {
		return v.IntVal == 0
	}
	return strings.TrimSuffix(v.StrVal, "%") == "0"
}

func validateIntOrPercent(v *intstr.IntOrString, path *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	if v.Type == intstr.Int {
		return validateNonNegative(&v.IntVal, path)
	}
	n, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	if !strings.HasSuffix(v.StrVal, "%") || err != nil {
		return field.ErrorList{field.Invalid(path, v.StrVal, "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")}
	}
	if n < 0 || n > 100 {
		return field.ErrorList{field.Invalid(path, v.StrVal, "must not be greater than 100%")}
	}
	return nil
}

func equalSemantic(a, b any) bool { return equality.Semantic.DeepEqual(a, b) }

// standardQuotaResources are the unprefixed names a quota may limit.
var standardQuotaResources = sets.New(
	"cpu", "memory", "ephemeral-storage",
	"requests.cpu", "requests.memory", "requests.storage", "requests.ephemeral-storage",
	"limits.cpu", "limits.memory", "limits.ephemeral-storage",
	"pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
	"persistentvolumeclaims", "services.nodeports", "services.loadbalancers")

// integerResources are counted in whole units.
var integerResources = sets.New("pods", "services", "replicationcontrollers", "resourcequotas",
	"secrets", "configmaps", "persistentvolumeclaims", "services.nodeports", "services.loadbalancers")

// standardContainerResources are what a container requests and is limited by.
var standardContainerResources = sets.New("cpu", "memory", "ephemeral-storage")

// standardResources are the unprefixed resource names in general.
var standardResources = standardQuotaResources.Union(sets.New("storage"))

// isHugePages: hugepages-<size>, with or without requests./limits.
func isHugePages(name string) bool {
	name = strings.TrimPrefix(name, "requests.")
	return strings.HasPrefix(name, "hugepages-")
}

// isExtendedResource: a domain-prefixed name outside kubernetes.io
// (example.com/gpu, count/deployments.apps), counted in whole units.
func isExtendedResource(name string) bool {
	prefix, _, found := strings.Cut(name, "/")
	if !found || strings.HasPrefix(name, "requests.") || prefix == "kubernetes.io" || strings.HasSuffix(prefix, ".kubernetes.io") {
		return false
	}
	return len(utilvalidation.IsQualifiedName("requests."+name)) == 0
}

// validateResourceName: a qualified name, and one of standard when it has
// no domain.
func validateResourceName(name string, standard func(string) bool, message string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	if len(errs) == 0 && !strings.Contains(name, "/") && !standard(name) {
		errs = append(errs, field.Invalid(path, name, message))
	}
	return errs
}

// validateQuantity: never negative, whole for counted resources.
func validateQuantity(name string, q resource.Quantity, path *field.Path) field.ErrorList {
	if q.Sign() < 0 {
		return field.ErrorList{field.Invalid(path, q.String(), "must be greater than or equal to 0")}
	}
	if (integerResources.Has(name) || isExtendedResource(name)) && q.MilliValue()%1000 != 0 {
		return field.ErrorList{field.Invalid(path, q.String(), "must be an integer")}
	}
	return nil
}

// immutableMsg is upstream's refusal to change an immutable object.
const immutableMsg = "field is immutable when `immutable` is set"

func itoa(n int32) string { return strconv.FormatInt(int64(n), 10) }

// validatePositiveQuantity: a size is more than zero.
func validatePositiveQuantity(q resource.Quantity, path *field.Path) field.ErrorList {
	if q.Cmp(resource.Quantity{}) <= 0 {
		return field.ErrorList{field.Invalid(path, q.String(), "must be greater than zero")}
	}
	return nil
}

// keysOf lists a resource list's names, for a message.
func keysOf(list corev1.ResourceList) []string {
	var names []string
	for name := range list {
		names = append(names, string(name))
	}
	return names
}

// jsonName is a struct field's name in JSON.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

func contains[T comparable](values []T, v T) bool {
	for _, x := range values {
		if x == v {
			return true
		}
	}
	return false
}
