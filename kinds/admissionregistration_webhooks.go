package kinds

// Validating and mutating webhook configurations
// (admissionregistration.k8s.io/v1): upstream's defaults and columns.
// minicp calls no webhook.

import (
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// validatingWebhookConfigurationsEntry describes the validatingwebhookconfigurations resource (admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration).
func validatingWebhookConfigurationsEntry() *registry.Resource {
	return entry(apigroups.AdmissionregistrationV1, "validatingwebhookconfigurations", "ValidatingWebhookConfiguration", false,
		"/registry/validatingwebhookconfigurations",
		func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfiguration{} },
		func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfigurationList{} },
		&registry.Resource{Categories: []string{"api-extensions"}, Strategy: validatingWebhookStrategy, Printer: validatingWebhookPrinter})
}

// mutatingWebhookConfigurationsEntry describes the mutatingwebhookconfigurations resource (admissionregistration.k8s.io/v1 MutatingWebhookConfiguration).
func mutatingWebhookConfigurationsEntry() *registry.Resource {
	return entry(apigroups.AdmissionregistrationV1, "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", false,
		"/registry/mutatingwebhookconfigurations",
		func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfiguration{} },
		func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfigurationList{} },
		&registry.Resource{Categories: []string{"api-extensions"}, Strategy: mutatingWebhookStrategy, Printer: mutatingWebhookPrinter})
}

// defaultWebhook fills what upstream fills in each admission webhook:
// failurePolicy Fail, matchPolicy Equivalent, match-all selectors, 10 s
// timeout, rules for every scope, port 443.
func defaultWebhook(failure **admissionregistrationv1.FailurePolicyType, match **admissionregistrationv1.MatchPolicyType,
	ns, obj **metav1.LabelSelector, timeout **int32, rules []admissionregistrationv1.RuleWithOperations, cc *admissionregistrationv1.WebhookClientConfig) {
	if *failure == nil {
		fail := admissionregistrationv1.Fail
		*failure = &fail
	}
	if *match == nil {
		equivalent := admissionregistrationv1.Equivalent
		*match = &equivalent
	}
	if *ns == nil {
		*ns = &metav1.LabelSelector{}
	}
	if *obj == nil {
		*obj = &metav1.LabelSelector{}
	}
	defaultInt32(timeout, 10)
	for i := range rules {
		if rules[i].Scope == nil {
			all := admissionregistrationv1.AllScopes
			rules[i].Scope = &all
		}
	}
	if cc.Service != nil {
		defaultInt32(&cc.Service.Port, 443)
	}
}

func defaultValidatingWebhooks(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		defaultWebhook(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, w.Rules, &w.ClientConfig)
	}
}

func defaultMutatingWebhooks(c *admissionregistrationv1.MutatingWebhookConfiguration) {
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		defaultWebhook(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, w.Rules, &w.ClientConfig)
		if w.ReinvocationPolicy == nil {
			never := admissionregistrationv1.NeverReinvocationPolicy
			w.ReinvocationPolicy = &never
		}
	}
}

var validatingWebhookStrategy = kindStrategy(kindRules[*admissionregistrationv1.ValidatingWebhookConfiguration]{defaults: defaultValidatingWebhooks})

var mutatingWebhookStrategy = kindStrategy(kindRules[*admissionregistrationv1.MutatingWebhookConfiguration]{defaults: defaultMutatingWebhooks})

var webhookColumns = []metav1.TableColumnDefinition{
	rest.NameColumn, column("Webhooks", "integer", "Webhooks indicates the number of webhooks registered in this configuration", 0), rest.AgeColumn,
}

var validatingWebhookPrinter = rest.TypedPrinter(webhookColumns, func(c *admissionregistrationv1.ValidatingWebhookConfiguration, now time.Time) metav1.TableRow {
	return metav1.TableRow{Cells: []any{c.Name, int64(len(c.Webhooks)), age(c.CreationTimestamp.Time, now)}}
})

var mutatingWebhookPrinter = rest.TypedPrinter(webhookColumns, func(c *admissionregistrationv1.MutatingWebhookConfiguration, now time.Time) metav1.TableRow {
	return metav1.TableRow{Cells: []any{c.Name, int64(len(c.Webhooks)), age(c.CreationTimestamp.Time, now)}}
})
