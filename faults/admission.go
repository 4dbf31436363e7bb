package faults

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// AdmissionPluginName is the name the fault plugin carries in the
// admission chain and in apiserver_admission_controller_admission_duration_seconds.
const AdmissionPluginName = "DebugFaults"

// Admit applies the faults of the "admission" point to a request on
// resource (a group-resource such as "pods" or "deployments.apps"): a
// delay there is time the apiserver spends on its own, with etcd idle.
// The control plane wraps it as an admission plugin named
// AdmissionPluginName; faults stays free of the apiserver's types so
// that minictl, which reads and writes faults, links no server code.
func (s *Set) Admit(ctx context.Context, resource string) error {
	err := s.apply(ctx, Admission, resource)
	if err == nil || ctx.Err() != nil {
		return err // nil, or the deadline: the apiserver answers 504
	}
	return apierrors.NewInternalError(err)
}
