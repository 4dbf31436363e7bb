package kinds

// apiextensions.k8s.io/v1 CustomResourceDefinitions, served as a built-in
// kind and stored as upstream stores them (protobuf at
// /registry/apiextensions.k8s.io/customresourcedefinitions/<name>).
// Defaulting and validation are apiextensions' own: the v1 defaulting
// functions, conversion to the internal types and
// validation.ValidateCustomResourceDefinition[Update]. What happens once a
// CRD is stored (names accepted, Established, its custom resources
// served, cleanup on deletion) belongs to package crd and to the CRD
// controller.

import (
	"context"
	"minicp/apigroups"
	"minicp/registry"
	"minicp/registry/rest"
	"minicp/registry/typeconverter"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// customResourceDefinitionsEntry describes the customresourcedefinitions
// resource (apiextensions.k8s.io/v1 CustomResourceDefinition).
func customResourceDefinitionsEntry() *registry.Resource {
	return entry(apigroups.ApiextensionsV1, "customresourcedefinitions", "CustomResourceDefinition", false,
		"/registry/apiextensions.k8s.io/customresourcedefinitions",
		func() runtime.Object { return &apiextensionsv1.CustomResourceDefinition{} },
		func() runtime.Object { return &apiextensionsv1.CustomResourceDefinitionList{} },
		&registry.Resource{ShortNames: []string{"crd", "crds"}, Categories: []string{"api-extensions"},
			Subresources: []string{"status"}, Strategy: crdStrategy,
			TypeConverter: typeconverter.Generated, // client-go's schema has no CRDs
		})
}

// apiextensionsScheme converts v1 CRDs to the internal types apiextensions'
// validation reads.
var apiextensionsScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	apiextensionsinstall.Install(s)
	return s
}()

// crdStrategy is apiextensions' own defaulting and validation.
var crdStrategy = &rest.Strategy{
	ValidateName:           func(string, bool) []string { return nil }, // apiextensions' validation checks <plural>.<group>
	PrepareForCreate:       crdPrepareForCreate,
	PrepareForUpdate:       crdPrepareForUpdate,
	PrepareForStatusUpdate: crdPrepareForStatusUpdate,
	ValidateCreate:         crdValidate,
	ValidateUpdate:         crdValidateUpdate,
	GracefulDelete:         crdGracefulDelete,
}

// crdPrepareForCreate defaults the CRD, clears its status, sets generation
// 1 and records the storage version in status.storedVersions.
func crdPrepareForCreate(obj runtime.Object) {
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	apiextensionsScheme.Default(crd)
	crd.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
	crd.Generation = 1
	addStoredVersion(crd)
}

// crdPrepareForUpdate keeps the stored status, bumps the generation when
// the spec changed and records a new storage version.
func crdPrepareForUpdate(obj, old runtime.Object) {
	crd, oldCRD := obj.(*apiextensionsv1.CustomResourceDefinition), old.(*apiextensionsv1.CustomResourceDefinition)
	apiextensionsScheme.Default(crd)
	crd.Status = oldCRD.Status
	if !equality.Semantic.DeepEqual(crd.Spec, oldCRD.Spec) {
		crd.Generation = oldCRD.Generation + 1
	}
	addStoredVersion(crd)
}

// crdPrepareForStatusUpdate keeps the stored spec.
func crdPrepareForStatusUpdate(obj, old runtime.Object) {
	obj.(*apiextensionsv1.CustomResourceDefinition).Spec = old.(*apiextensionsv1.CustomResourceDefinition).Spec
}

func addStoredVersion(crd *apiextensionsv1.CustomResourceDefinition) {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			if !apihelpers.IsStoredVersion(crd, v.Name) {
				crd.Status.StoredVersions = append(crd.Status.StoredVersions, v.Name)
			}
			return
		}
	}
}

// internalCRD converts a v1 CRD to the internal type validation reads.
func internalCRD(obj runtime.Object) (*apiextensions.CustomResourceDefinition, *field.Error) {
	out := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsScheme.Convert(obj, out, nil); err != nil {
		return nil, field.InternalError(field.NewPath(""), err)
	}
	return out, nil
}

func crdValidate(obj runtime.Object) field.ErrorList {
	crd, ferr := internalCRD(obj)
	if ferr != nil {
		return field.ErrorList{ferr}
	}
	return apiextensionsvalidation.ValidateCustomResourceDefinition(context.Background(), crd)
}

// crdValidateUpdate checks a main or status update as upstream's two
// strategies do (the status one when only the status changed).
func crdValidateUpdate(obj, old runtime.Object) field.ErrorList {
	crd, ferr := internalCRD(obj)
	if ferr != nil {
		return field.ErrorList{ferr}
	}
	oldCRD, ferr := internalCRD(old)
	if ferr != nil {
		return field.ErrorList{ferr}
	}
	if equality.Semantic.DeepEqual(crd.Spec, oldCRD.Spec) {
		return apiextensionsvalidation.ValidateUpdateCustomResourceDefinitionStatus(context.Background(), crd, oldCRD)
	}
	return apiextensionsvalidation.ValidateCustomResourceDefinitionUpdate(context.Background(), crd, oldCRD)
}

// crdGracefulDelete is upstream's first DELETE of a CRD: it adds the
// customresourcecleanup finalizer and the Terminating condition, so that
// the generic rules mark the CRD deleted and keep it until the CRD
// controller has deleted every custom resource and removed the finalizer.
func crdGracefulDelete(obj runtime.Object, now time.Time) rest.DeleteAction {
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	if crd.DeletionTimestamp != nil {
		return rest.DeleteNow
	}
	if !apihelpers.CRDHasFinalizer(crd, apiextensionsv1.CustomResourceCleanupFinalizer) {
		crd.Finalizers = append(crd.Finalizers, apiextensionsv1.CustomResourceCleanupFinalizer)
	}
	apihelpers.SetCRDCondition(crd, apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue,
		Reason: "InstanceDeletionPending", Message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
		LastTransitionTime: metav1.NewTime(now),
	})
	return rest.DeleteNow
}
