package kinds

// Leases (coordination.k8s.io/v1), which every node renews.

import (
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// leasesEntry describes the leases resource (coordination.k8s.io/v1 Lease).
func leasesEntry() *registry.Resource {
	return entry(apigroups.CoordinationV1, "leases", "Lease", true, "/registry/leases",
		func() runtime.Object { return &coordinationv1.Lease{} }, func() runtime.Object { return &coordinationv1.LeaseList{} },
		&registry.Resource{AllowCreateOnUpdate: true, Strategy: leaseStrategy, Printer: leasePrinter,
			// Every node renews its Lease every 10 s.
			WatchCacheSize: 5000})
}

var leasePrinter = rest.TypedPrinter(
	[]metav1.TableColumnDefinition{
		rest.NameColumn,
		{Name: "Holder", Type: "string", Description: coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]},
		rest.AgeColumn,
	},
	func(lease *coordinationv1.Lease, now time.Time) metav1.TableRow {
		holder := ""
		if lease.Spec.HolderIdentity != nil {
			holder = *lease.Spec.HolderIdentity
		}
		return metav1.TableRow{Cells: []any{lease.Name, holder, age(lease.CreationTimestamp.Time, now)}}
	},
)

var leaseStrategy = &rest.Strategy{
	ValidateName: validation.NameIsDNSSubdomain,
	Validate: func(obj runtime.Object) field.ErrorList {
		spec := obj.(*coordinationv1.Lease).Spec
		var errs field.ErrorList
		p := field.NewPath("spec")
		if d := spec.LeaseDurationSeconds; d != nil && *d <= 0 {
			errs = append(errs, field.Invalid(p.Child("leaseDurationSeconds"), *d, "must be greater than 0"))
		}
		if n := spec.LeaseTransitions; n != nil && *n < 0 {
			errs = append(errs, field.Invalid(p.Child("leaseTransitions"), *n, "must be greater than or equal to 0"))
		}
		return errs
	},
}
