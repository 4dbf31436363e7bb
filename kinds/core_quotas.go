package kinds

// ResourceQuotas and LimitRanges: the main rules of upstream's validation
// (resource names, non-negative and whole amounts, scopes that fit the
// resources, min <= default request <= default <= max). minicp stores
// them; it neither counts usage nor applies limits (no admission).

import (
	"fmt"
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// resourceQuotasEntry describes the resourcequotas resource (core/v1 ResourceQuota).
func resourceQuotasEntry() *registry.Resource {
	return entry(apigroups.CoreV1, "resourcequotas", "ResourceQuota", true, "/registry/resourcequotas",
		func() runtime.Object { return &corev1.ResourceQuota{} }, func() runtime.Object { return &corev1.ResourceQuotaList{} },
		&registry.Resource{ShortNames: []string{"quota"}, Strategy: resourceQuotaStrategy, Subresources: []string{"status"}, Printer: resourceQuotaPrinter})
}

// limitRangesEntry describes the limitranges resource (core/v1 LimitRange).
func limitRangesEntry() *registry.Resource {
	return entry(apigroups.CoreV1, "limitranges", "LimitRange", true, "/registry/limitranges",
		func() runtime.Object { return &corev1.LimitRange{} }, func() runtime.Object { return &corev1.LimitRangeList{} },
		&registry.Resource{ShortNames: []string{"limits"}, Strategy: limitRangeStrategy, Printer: limitRangePrinter})
}

var quotaScopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating,
	corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopePriorityClass,
	corev1.ResourceQuotaScopeCrossNamespacePodAffinity, corev1.ResourceQuotaScopeVolumeAttributesClass}

var podComputeResources = sets.New("pods", "cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory")

var claimResources = sets.New("persistentvolumeclaims", "requests.storage")

func scopeFitsResource(scope corev1.ResourceQuotaScope, name string) bool {
	switch scope {
	case corev1.ResourceQuotaScopeBestEffort:
		return name == "pods"
	case corev1.ResourceQuotaScopeVolumeAttributesClass:
		return claimResources.Has(name)
	case corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeNotBestEffort,
		corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return podComputeResources.Has(name)
	}
	return true
}

func isStandardQuotaResource(name string) bool {
	return standardQuotaResources.Has(name) || isHugePages(name)
}

func validateResourceQuota(rq *corev1.ResourceQuota) field.ErrorList {
	path := field.NewPath("spec")
	var errs field.ErrorList
	for name, q := range rq.Spec.Hard {
		p := path.Child("hard").Key(string(name))
		errs = append(errs, validateResourceName(string(name), isStandardQuotaResource, "must be a standard resource for quota", p)...)
		errs = append(errs, validateQuantity(string(name), q, p)...)
	}
	scopes := rq.Spec.Scopes
	errs = append(errs, validateScopes(scopes, rq.Spec.Hard, path.Child("scopes"), rq.Spec.Scopes)...)
	if sel := rq.Spec.ScopeSelector; sel != nil {
		for i, req := range sel.MatchExpressions {
			p := path.Child("scopeSelector", "matchExpressions").Index(i)
			errs = append(errs, validateScopeRequirement(req, p)...)
			errs = append(errs, validateScopes([]corev1.ResourceQuotaScope{req.ScopeName}, rq.Spec.Hard, p.Child("scopeName"), req.ScopeName)...)
			scopes = append(scopes, req.ScopeName)
		}
	}
	scopesPath := path.Child("scopes")
	for _, pair := range [][2]corev1.ResourceQuotaScope{
		{corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating},
		{corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort},
	} {
		if contains(scopes, pair[0]) && contains(scopes, pair[1]) {
			errs = append(errs, field.Invalid(scopesPath, rq.Spec.Scopes, "conflicting scopes"))
		}
	}
	return errs
}

// validateScopes: each scope known and able to limit every standard
// resource of the quota.
func validateScopes(scopes []corev1.ResourceQuotaScope, hard corev1.ResourceList, path *field.Path, value any) field.ErrorList {
	var errs field.ErrorList
	for _, scope := range scopes {
		if !contains(quotaScopes, scope) {
			errs = append(errs, field.Invalid(path, value, "unsupported scope"))
			continue
		}
		for _, name := range sets.List(sets.KeySet(hard)) {
			if isStandardQuotaResource(string(name)) && !scopeFitsResource(scope, string(name)) {
				errs = append(errs, field.Invalid(path, value, "unsupported scope applied to resource"))
				break
			}
		}
	}
	return errs
}

// validateScopeRequirement: the operators each scope allows.
func validateScopeRequirement(req corev1.ScopedResourceSelectorRequirement, path *field.Path) field.ErrorList {
	ops := []corev1.ScopeSelectorOperator{corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn, corev1.ScopeSelectorOpExists, corev1.ScopeSelectorOpDoesNotExist}
	if !contains(ops, req.Operator) {
		return field.ErrorList{field.NotSupported(path.Child("operator"), req.Operator, ops)}
	}
	switch req.ScopeName {
	case corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeBestEffort,
		corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		if req.Operator != corev1.ScopeSelectorOpExists {
			return field.ErrorList{field.Invalid(path.Child("operator"), req.Operator, "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity")}
		}
	}
	switch req.Operator {
	case corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn:
		if len(req.Values) == 0 {
			return field.ErrorList{field.Required(path.Child("values"), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector")}
		}
	case corev1.ScopeSelectorOpExists, corev1.ScopeSelectorOpDoesNotExist:
		if len(req.Values) != 0 {
			return field.ErrorList{field.Invalid(path.Child("values"), req.Values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector")}
		}
	}
	return nil
}

var limitTypes = sets.New(string(corev1.LimitTypePod), string(corev1.LimitTypeContainer), string(corev1.LimitTypePersistentVolumeClaim))

func validateLimitRange(lr *corev1.LimitRange) field.ErrorList {
	path := field.NewPath("spec", "limits")
	var errs field.ErrorList
	seen := sets.New[corev1.LimitType]()
	for i := range lr.Spec.Limits {
		limit, p := &lr.Spec.Limits[i], path.Index(i)
		errs = append(errs, validateResourceName(string(limit.Type), limitTypes.Has, "must be a standard limit type or fully qualified", p.Child("type"))...)
		if seen.Has(limit.Type) {
			errs = append(errs, field.Duplicate(p.Child("type"), limit.Type))
		}
		seen.Insert(limit.Type)
		errs = append(errs, validateLimit(limit, p)...)
	}
	return errs
}

// validateLimit checks one item of a LimitRange: its resource names, what
// a Pod or claim item may hold, and the order of its amounts.
func validateLimit(limit *corev1.LimitRangeItem, p *field.Path) field.ErrorList {
	standard, message := standardResources.Has, "must be a standard resource type or fully qualified"
	if limit.Type == corev1.LimitTypePod || limit.Type == corev1.LimitTypeContainer {
		standard = func(name string) bool { return standardContainerResources.Has(name) || isHugePages(name) }
		message = "must be a standard resource for containers"
	}
	var errs field.ErrorList
	keys := sets.New[corev1.ResourceName]()
	for _, l := range []struct {
		child string
		list  corev1.ResourceList
	}{{"max", limit.Max}, {"min", limit.Min}, {"default", limit.Default}, {"defaultRequest", limit.DefaultRequest}, {"maxLimitRequestRatio", limit.MaxLimitRequestRatio}} {
		for _, name := range sets.List(sets.KeySet(l.list)) {
			errs = append(errs, validateResourceName(string(name), standard, message, p.Child(l.child).Key(string(name)))...)
			keys.Insert(name)
		}
	}
	if limit.Type == corev1.LimitTypePod {
		if len(limit.Default) > 0 {
			errs = append(errs, field.Forbidden(p.Child("default"), "may not be specified when `type` is 'Pod'"))
		}
		if len(limit.DefaultRequest) > 0 {
			errs = append(errs, field.Forbidden(p.Child("defaultRequest"), "may not be specified when `type` is 'Pod'"))
		}
	}
	if limit.Type == corev1.LimitTypePersistentVolumeClaim {
		_, hasMin := limit.Min[corev1.ResourceStorage]
		_, hasMax := limit.Max[corev1.ResourceStorage]
		if !hasMin && !hasMax {
			errs = append(errs, field.Required(p.Child("limits"), "either minimum or maximum storage value is required, but neither was provided"))
		}
	}
	for _, name := range sets.List(keys) {
		errs = append(errs, validateLimitOrder(limit, name, p)...)
	}
	return errs
}

// validateLimitOrder: min <= defaultRequest <= default <= max for one
// resource, and a limit/request ratio of at least 1 and at most max/min.
func validateLimitOrder(limit *corev1.LimitRangeItem, name corev1.ResourceName, p *field.Path) field.ErrorList {
	key := string(name)
	minQ, hasMin := limit.Min[name]
	maxQ, hasMax := limit.Max[name]
	def, hasDef := limit.Default[name]
	req, hasReq := limit.DefaultRequest[name]
	ratio, hasRatio := limit.MaxLimitRequestRatio[name]
	var errs field.ErrorList
	greater := func(ok bool, a, b resource.Quantity, at *field.Path, value resource.Quantity, format string) {
		if ok && a.Cmp(b) > 0 {
			errs = append(errs, field.Invalid(at.Key(key), value.String(), fmt.Sprintf(format, a.String(), b.String())))
		}
	}
	greater(hasMin && hasMax, minQ, maxQ, p.Child("min"), minQ, "min value %s is greater than max value %s")
	greater(hasReq && hasMin, minQ, req, p.Child("defaultRequest"), req, "min value %s is greater than default request value %s")
	greater(hasReq && hasMax, req, maxQ, p.Child("defaultRequest"), req, "default request value %s is greater than max value %s")
	greater(hasReq && hasDef, req, def, p.Child("defaultRequest"), req, "default request value %s is greater than default limit value %s")
	greater(hasDef && hasMin, minQ, def, p.Child("default"), minQ, "min value %s is greater than default value %s")
	greater(hasDef && hasMax, def, maxQ, p.Child("default"), maxQ, "default value %s is greater than max value %s")
	if hasRatio && ratio.Cmp(resource.MustParse("1")) < 0 {
		errs = append(errs, field.Invalid(p.Child("maxLimitRequestRatio").Key(key), ratio.String(), fmt.Sprintf("ratio %s is less than 1", ratio.String())))
	}
	if hasRatio && hasMin && hasMax && minQ.Sign() > 0 {
		if bound := float64(maxQ.MilliValue()) / float64(minQ.MilliValue()); float64(ratio.MilliValue())/1000 > bound {
			errs = append(errs, field.Invalid(p.Child("maxLimitRequestRatio").Key(key), ratio.String(), fmt.Sprintf("ratio %s is greater than max/min = %f", ratio.String(), bound)))
		}
	}
	return errs
}

var resourceQuotaStrategy = kindStrategy(kindRules[*corev1.ResourceQuota]{validate: validateResourceQuota})

var limitRangeStrategy = kindStrategy(kindRules[*corev1.LimitRange]{validate: validateLimitRange})

var resourceQuotaPrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn, rest.AgeColumn,
		column("Request", "string", "Request represents a minimum amount of cpu/memory that a container may consume.", 0),
		column("Limit", "string", "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.", 0),
	},
	func(q *corev1.ResourceQuota, now time.Time) metav1.TableRow {
		var requests, limits []string
		names := make([]string, 0, len(q.Spec.Hard))
		for name := range q.Spec.Hard {
			names = append(names, string(name))
		}
		sort.Strings(names)
		for _, name := range names {
			hard := q.Spec.Hard[corev1.ResourceName(name)]
			used := q.Status.Used[corev1.ResourceName(name)]
			entry := fmt.Sprintf("%s: %s/%s", name, used.String(), hard.String())
			if strings.HasPrefix(name, "limits.") {
				limits = append(limits, entry)
			} else {
				requests = append(requests, entry)
			}
		}
		return metav1.TableRow{Cells: []any{q.Name, age(q.CreationTimestamp.Time, now), strings.Join(requests, ", "), strings.Join(limits, ", ")}}
	},
)

var limitRangePrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{rest.NameColumn, createdAtColumn},
	func(lr *corev1.LimitRange, _ time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{lr.Name, createdAt(lr)}}
	},
)
