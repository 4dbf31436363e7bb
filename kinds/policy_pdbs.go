package kinds

// PodDisruptionBudgets (policy/v1).

import (
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// podDisruptionBudgetsEntry describes the poddisruptionbudgets resource (policy/v1 PodDisruptionBudget).
func podDisruptionBudgetsEntry() *registry.Resource {
	return entry(apigroups.PolicyV1, "poddisruptionbudgets", "PodDisruptionBudget", true, "/registry/poddisruptionbudgets",
		func() runtime.Object { return &policyv1.PodDisruptionBudget{} }, func() runtime.Object { return &policyv1.PodDisruptionBudgetList{} },
		&registry.Resource{ShortNames: []string{"pdb"}, Strategy: pdbStrategy, Subresources: []string{"status"}, Printer: pdbPrinter})
}

var pdbStrategy = kindStrategy(kindRules[*policyv1.PodDisruptionBudget]{})

var pdbPrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		column("Min Available", "string", "The minimum number of pods that must be available.", 0),
		column("Max Unavailable", "string", "The maximum number of pods that may be unavailable.", 0),
		column("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this time.", 0),
		rest.AgeColumn,
	},
	func(pdb *policyv1.PodDisruptionBudget, now time.Time) metav1.TableRow {
		minAvailable, maxUnavailable := "N/A", "N/A"
		if v := pdb.Spec.MinAvailable; v != nil {
			minAvailable = v.String()
		}
		if v := pdb.Spec.MaxUnavailable; v != nil {
			maxUnavailable = v.String()
		}
		return metav1.TableRow{Cells: []any{pdb.Name, minAvailable, maxUnavailable, int64(pdb.Status.DisruptionsAllowed), age(pdb.CreationTimestamp.Time, now)}}
	},
)
