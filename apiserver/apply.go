package apiserver

// Server-side apply: PATCH with Content-Type application/apply-patch+yaml
// (`kubectl apply --server-side`, client-go's Apply with apply
// configurations, controller-runtime's client.Apply). The body is a
// partial object, the applied configuration: the fields its manager
// (fieldManager, required) wants to own, with the values it wants. The
// field manager (fieldmanager.go) merges it into the stored object:
//
//   - a field the manager applied before and leaves out now is removed,
//     unless another manager owns it too;
//   - a field another manager owns with a different value is a conflict:
//     409 Conflict with one cause per field, naming the field and its
//     manager, unless force=true, which takes the field over;
//   - an object that does not exist is created from the configuration
//     (201 Created).
//
// Like every patch, an apply runs inside the store's compare-and-swap
// loop: a concurrent write makes it merge again into the fresh object.

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/yaml"

	"minicp/registry"
)

// applier holds one apply request. apply may run several times (once per
// compare-and-swap attempt).
type applier struct {
	res        *registry.Resource
	info       *requestInfo
	fm         *managedfields.FieldManager
	manager    string
	force      bool
	validation string
	config     map[string]any // the applied configuration, parsed once
	warnings   []string
}

// newApplier parses an apply patch. A body that is not a YAML (or JSON)
// object is 400 BadRequest, as upstream answers. Integers stay int64 (as
// apimachinery's yaml decodes them), as every later step expects.
func newApplier(res *registry.Resource, info *requestInfo, fm *managedfields.FieldManager, opts metav1.PatchOptions, body []byte) (*applier, error) {
	a := &applier{res: res, info: info, fm: fm, manager: opts.FieldManager, validation: opts.FieldValidation}
	if opts.Force != nil {
		a.force = *opts.Force
	}
	strictErr, err := a.parse(body)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v; an apply patch is a YAML or JSON object with apiVersion, kind, metadata.name and the fields to own", err))
	}
	if a.config == nil {
		return nil, apierrors.NewBadRequest("error decoding patch: the apply patch is empty; send a YAML or JSON object with apiVersion, kind, metadata.name and the fields to own")
	}
	// The field manager refuses another kind or version too, with no word
	// of what it expected.
	if gvk := (&unstructured.Unstructured{Object: a.config}).GroupVersionKind(); gvk != res.GroupVersionKind() {
		want := res.GroupVersionKind()
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid object type: %v; the applied configuration must have apiVersion: %s and kind: %s",
			gvk, want.GroupVersion(), want.Kind))
	}
	if strictErr != nil { // a duplicate field
		if a.validation == metav1.FieldValidationStrict {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("error strict decoding patch: %v", strictErr))
		}
		a.warnings = append(a.warnings, strictErr.Error())
	}
	return a, nil
}

// parse reads body into the applied configuration. fieldValidation
// Strict or Warn looks for duplicate fields, which only a strict parse
// finds, and a strict parse that finds none is the configuration itself:
// the body is parsed once. Only when the strict parse fails is it parsed
// again, leniently, to tell a duplicate field (strictErr) from a body
// that is not an object at all (err).
func (a *applier) parse(body []byte) (strictErr, err error) {
	if a.validation == metav1.FieldValidationStrict || a.validation == metav1.FieldValidationWarn {
		if strictErr = yaml.UnmarshalStrict(body, &a.config); strictErr == nil {
			return nil, nil
		}
		a.config = nil
	}
	return strictErr, yaml.Unmarshal(body, &a.config)
}

// lastWarnings are the field validation warnings of the request.
func (a *applier) lastWarnings() []string { return a.warnings }

// apply is the registry.UpdateFunc of an apply: it merges the applied
// configuration into the current object (an empty one when it does not
// exist, and the store then creates it). resourceVersion follows the rule
// of every patch (patcher.apply): a configuration that names one makes it
// a precondition.
func (a *applier) apply(current runtime.Object) (runtime.Object, error) {
	live := current
	if live == nil {
		live = emptyObject(a.res)
	}
	config := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(a.config)}
	obj, err := a.fm.Apply(live, config, a.manager, a.force)
	if err != nil {
		return nil, applyError(err)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if current == nil && m.GetUID() != "" {
		return nil, apierrors.NewConflict(a.res.GroupResource(), a.info.name,
			fmt.Errorf("uid mismatch: the provided object specified uid %s, and no existing object was found", m.GetUID()))
	}
	if err := ensureNamespace(obj, a.info.namespace, a.res); err != nil {
		return nil, err
	}
	if err := checkName(obj, a.info.name); err != nil {
		return nil, err
	}
	if current != nil {
		currentMeta, err := meta.Accessor(current)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if m.GetResourceVersion() == currentMeta.GetResourceVersion() {
			m.SetResourceVersion("")
		}
	}
	return obj, nil
}

// applyError keeps the field manager's Status errors (409 Conflict with
// the managers and fields, 400 for a configuration of another version) and
// turns the rest, which upstream answers as 500 although they are the
// configuration's fault (a field the kind's schema does not declare, a
// value of the wrong type), into 400 BadRequest with a hint.
func applyError(err error) error {
	if _, ok := err.(apierrors.APIStatus); ok {
		return err
	}
	return apierrors.NewBadRequest(fmt.Sprintf("%v; check the applied configuration's field names and types against the kind's schema (kubectl explain)", err))
}

// emptyObject is a new object of res with its apiVersion and kind set: the
// "live" object an apply or a create is compared against.
func emptyObject(res *registry.Resource) runtime.Object {
	obj := res.New()
	obj.GetObjectKind().SetGroupVersionKind(res.GroupVersionKind())
	return obj
}

// applyCBORUnsupported answers application/apply-patch+cbor, which
// upstream serves only behind an alpha feature gate.
func applyCBORUnsupported() error {
	return unsupportedMediaTypeWith("server-side apply in CBOR (" + string(types.ApplyCBORPatchType) + ") is not served (upstream serves it only behind an alpha feature gate); " +
		"send the same configuration as " + string(types.ApplyYAMLPatchType))
}
