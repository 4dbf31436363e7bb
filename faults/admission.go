package faults

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"minicp/apiserver/admission"
)

// AdmissionPluginName is the name the fault plugin carries in the
// admission chain and in apiserver_admission_controller_admission_duration_seconds.
const AdmissionPluginName = "DebugFaults"

// AdmissionPlugin returns the admission plugin that applies the faults of
// the "admission" point: a delay there is time the apiserver spends on its
// own, with etcd idle.
func (s *Set) AdmissionPlugin() admission.Plugin { return admissionPlugin{s} }

type admissionPlugin struct{ set *Set }

func (p admissionPlugin) Name() string { return AdmissionPluginName }

func (p admissionPlugin) Admit(ctx context.Context, a *admission.Attributes) error {
	err := p.set.apply(ctx, Admission, a.Resource.GroupVersionResource().GroupResource().String())
	if err == nil || ctx.Err() != nil {
		return err // nil, or the deadline: the apiserver answers 504
	}
	return apierrors.NewInternalError(err)
}
