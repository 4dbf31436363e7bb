package kinds

// ServiceAccounts.

import (
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// serviceAccountsEntry describes the serviceaccounts resource (core/v1 ServiceAccount).
func serviceAccountsEntry() *registry.Resource {
	return entry(apigroups.CoreV1, "serviceaccounts", "ServiceAccount", true, "/registry/serviceaccounts",
		func() runtime.Object { return &corev1.ServiceAccount{} }, func() runtime.Object { return &corev1.ServiceAccountList{} },
		&registry.Resource{ShortNames: []string{"sa"}, Strategy: serviceAccountStrategy, Printer: serviceAccountPrinter})
}

var serviceAccountStrategy = kindStrategy(kindRules[*corev1.ServiceAccount]{})

var serviceAccountPrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn, column("Secrets", "string", corev1.ServiceAccount{}.SwaggerDoc()["secrets"], 0), rest.AgeColumn,
	},
	func(sa *corev1.ServiceAccount, now time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{sa.Name, int64(len(sa.Secrets)), age(sa.CreationTimestamp.Time, now)}}
	},
)
