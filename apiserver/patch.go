package apiserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minicp/registry"
)

// servedPatchTypes are the patch formats minicp applies.
var servedPatchTypes = []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.StrategicMergePatchType), string(types.ApplyYAMLPatchType)}

// patchMechanism is one kind of patch: a JSON, merge or strategic merge
// patch (patcher) or a server-side apply (applier). apply is the store's
// UpdateFunc; it may run once per compare-and-swap attempt.
type patchMechanism interface {
	apply(current runtime.Object) (runtime.Object, error)
	// lastWarnings are the field validation warnings of the last attempt.
	lastWarnings() []string
}

// patchObject applies a patch to the current object inside the store's
// read-modify-write loop: every attempt patches the object as it is in
// etcd at that moment, so a concurrent write makes the store retry with the
// fresh object instead of losing it. See patcher.apply for resourceVersion.
// The patched object's managedFields record the request's manager
// (fieldmanager.go); an apply creates the object when it does not exist.
func (s *Server) patchObject(w http.ResponseWriter, req *http.Request, info *requestInfo, res *registry.Resource) error {
	out, err := negotiateOutput(req, targetObject)
	if err != nil {
		return err
	}
	patchType, err := patchTypeOf(req)
	if err != nil {
		return err
	}
	opts, err := patchOptions(req, patchType)
	if err != nil {
		return err
	}
	body, err := readBody(req, s.cfg.MaxRequestBodyBytes)
	if err != nil {
		return err
	}
	fm, err := fieldManagerFor(res, info.subresource)
	if err != nil {
		return err
	}
	mechanism, err := newPatchMechanism(res, info, fm, patchType, opts, req.UserAgent(), body)
	if err != nil {
		return err
	}
	updateOpts := registry.UpdateOptions{
		DryRun:      len(opts.DryRun) > 0,
		Subresource: info.subresource,
		// An apply creates what it applies; not through a subresource.
		AllowCreate: patchType == types.ApplyYAMLPatchType && info.subresource == "",
	}
	tryUpdate := s.admitted(req.Context(), info, res, updateOpts.DryRun, mechanism.apply)
	updated, code, err := s.update(req.Context(), info, res, updateOpts, tryUpdate, patchType != types.ApplyYAMLPatchType)
	if err != nil {
		return err
	}
	addWarnings(w, mechanism.lastWarnings())
	writeObject(w, req, res, out, code, updated)
	return nil
}

// patchTypeOf reads the patch format from Content-Type: 415 for a format
// minicp does not apply.
func patchTypeOf(req *http.Request) (types.PatchType, error) {
	patchType := types.PatchType(mediaTypeOf(req.Header.Get("Content-Type")))
	switch patchType {
	case types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType, types.ApplyYAMLPatchType:
		return patchType, nil
	case types.ApplyCBORPatchType:
		return "", applyCBORUnsupported()
	}
	return "", unsupportedMediaType(servedPatchTypes)
}

// newPatchMechanism parses the patch body for its format.
func newPatchMechanism(res *registry.Resource, info *requestInfo, fm *managedfields.FieldManager, patchType types.PatchType,
	opts metav1.PatchOptions, userAgent string, body []byte) (patchMechanism, error) {
	if patchType == types.ApplyYAMLPatchType {
		return newApplier(res, info, fm, opts, body)
	}
	p := &patcher{res: res, info: info, patchType: patchType, patch: body, validation: opts.FieldValidation,
		fm: fm, manager: managerName(opts.FieldManager, userAgent)}
	if err := p.parse(); err != nil {
		return nil, err
	}
	return p, nil
}

// patcher holds one patch request. apply may run several times (once per
// compare-and-swap attempt); warnings are those of the last attempt.
type patcher struct {
	res        *registry.Resource
	info       *requestInfo
	patchType  types.PatchType
	patch      []byte
	validation string

	// fm records the patch in managedFields under manager.
	fm      *managedfields.FieldManager
	manager string

	jsonPatch jsonpatch.Patch // parsed once, for JSON patches
	warnings  []string
}

// lastWarnings are the field validation warnings of the last attempt.
func (p *patcher) lastWarnings() []string { return p.warnings }

// parse checks the patch document before touching storage: a body that is
// not a patch of its declared type is 400 BadRequest.
func (p *patcher) parse() error {
	if p.patchType == types.JSONPatchType {
		patch, err := jsonpatch.DecodePatch(p.patch)
		if err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf(`the body of a JSON patch must be an array of operations such as [{"op":"replace","path":"/metadata/labels/app","value":"web"}]: %v`, err))
		}
		p.jsonPatch = patch
		return nil
	}
	var doc map[string]any
	if err := json.Unmarshal(p.patch, &doc); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("the body of a %s patch must be a JSON object: %v", p.patchType, err))
	}
	return nil
}

// apply is the registry.UpdateFunc of a patch: it patches the JSON of the
// current object and decodes the result.
//
// resourceVersion: the current object carries its own resourceVersion, so
// the patched result carries it too unless the patch set another one. If
// the result's resourceVersion is the current one, the patch did not ask
// for a precondition and apply clears it, letting the store retry on a
// concurrent write; if the patch set a resourceVersion, it stays and the
// store's compare-and-swap is strict (409 Conflict when it is stale).
func (p *patcher) apply(current runtime.Object) (runtime.Object, error) {
	if current == nil {
		return nil, apierrors.NewNotFound(p.res.GroupVersionResource().GroupResource(), p.info.name)
	}
	currentMeta, err := meta.Accessor(current)
	if err != nil {
		return nil, err
	}
	var currentJSON bytes.Buffer
	if err := encoderFor(mediaTypeInfo(runtime.ContentTypeJSON).Serializer, p.res.GroupVersion, current).Encode(current, &currentJSON); err != nil {
		return nil, fmt.Errorf("encoding the current object: %w", err)
	}
	patched, err := p.applyToJSON(currentJSON.Bytes())
	if err != nil {
		return nil, err
	}
	obj, err := p.decode(patched)
	if err != nil {
		return nil, err
	}
	if err := ensureNamespace(obj, p.info.namespace, p.res); err != nil {
		return nil, err
	}
	if err := checkName(obj, p.info.name); err != nil {
		return nil, err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	if m.GetResourceVersion() == currentMeta.GetResourceVersion() {
		m.SetResourceVersion("")
	}
	return p.fm.UpdateNoErrors(current, obj, p.manager), nil
}

// applyToJSON applies the patch document to the object's JSON, with
// upstream's codes for patches that do not apply.
func (p *patcher) applyToJSON(original []byte) ([]byte, error) {
	switch p.patchType {
	case types.JSONPatchType:
		patched, err := p.jsonPatch.Apply(original)
		if err != nil {
			return nil, patchNotApplicable(err)
		}
		return patched, nil
	case types.MergePatchType:
		patched, err := jsonpatch.MergePatch(original, p.patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		return patched, nil
	}
	// A strategic merge patch merges lists by their patch merge key (e.g.
	// containers by name), read from the Go type's struct tags.
	patched, err := strategicpatch.StrategicMergePatch(original, p.patch, p.res.New())
	switch {
	case err == nil:
		return patched, nil
	case errors.Is(err, mergepatch.ErrNoListOfLists), errors.Is(err, mergepatch.ErrPatchContentNotMatchRetainKeys):
		return nil, patchNotApplicable(err)
	}
	return nil, apierrors.NewBadRequest(err.Error())
}

// patchNotApplicable is 422: the patch is well-formed but does not fit the
// object (a JSON patch removing a path that does not exist, a failed test).
func patchNotApplicable(err error) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusUnprocessableEntity,
		Reason:  metav1.StatusReasonInvalid,
		Message: fmt.Sprintf("the patch could not be applied to the current object: %v; fetch the object and check the paths the patch names", err),
	}}
}

// decode turns the patched JSON into an object, checking unknown and
// duplicate fields as fieldValidation asks.
func (p *patcher) decode(patched []byte) (runtime.Object, error) {
	info, _ := runtime.SerializerInfoForMediaType(registry.Codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	decoding := info.StrictSerializer
	if p.validation == metav1.FieldValidationIgnore {
		decoding = info.Serializer
	}
	defaultGVK := p.res.GroupVersionKind()
	obj, _, err := registry.Codecs.DecoderToVersion(decoding, p.res.GroupVersion).Decode(patched, &defaultGVK, p.res.New())
	p.warnings = nil
	var strictErrs []error
	if err != nil {
		strictErr, isStrict := runtime.AsStrictDecodingError(err)
		switch {
		case !isStrict:
			return nil, p.invalidPatch(patched, err)
		case obj == nil:
			return nil, apierrors.NewBadRequest(strictErr.Error())
		}
		strictErrs = strictErr.Errors()
	}
	unknown, err := coerceDecoded(p.res, obj, p.validation)
	if err != nil {
		return nil, p.invalidPatch(patched, err)
	}
	strictErrs = append(strictErrs, unknown...)
	if len(strictErrs) > 0 && p.validation == metav1.FieldValidationStrict {
		return nil, apierrors.NewBadRequest(runtime.NewStrictDecodingError(strictErrs).Error())
	}
	p.warnings = fieldWarnings(strictErrs)
	return obj, nil
}

// invalidPatch is the 422 of a patch whose result does not decode.
func (p *patcher) invalidPatch(patched []byte, err error) error {
	return apierrors.NewInvalid(p.res.GroupVersionKind().GroupKind(), p.info.name, field.ErrorList{
		field.Invalid(field.NewPath("patch"), string(patched), err.Error()),
	})
}
