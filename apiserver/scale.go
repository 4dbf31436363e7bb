package apiserver

// The scale subresource (autoscaling/v1 Scale): `kubectl scale` and the
// HorizontalPodAutoscaler read and resize deployments, replicasets,
// statefulsets and replicationcontrollers through it. A Scale is a view
// of its object (Resource.Scale says how), never stored: a GET reads the
// object, a PUT or PATCH changes the object's spec.replicas inside the
// store's compare-and-swap loop and writes the object itself, so its
// generation grows as for any spec change, and a Scale sent with a
// resourceVersion is a precondition on the object's.

import (
	"fmt"
	"net/http"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"minicp/registry"
	"minicp/registry/typeconverter"
	"minicp/reqtrace"
)

// scaleResource describes the Scale kind for decoding and encoding (it
// has no storage of its own).
func scaleResource(res *registry.Resource) *registry.Resource {
	return &registry.Resource{
		GroupVersion: autoscalingv1.SchemeGroupVersion, Name: res.Name, Kind: "Scale", ListKind: "ScaleList",
		Namespaced: res.Namespaced,
		New:        func() runtime.Object { return &autoscalingv1.Scale{} },
		// The schema client-go compiles in has no Scale.
		TypeConverter: typeconverter.Generated,
	}
}

// scaleOf builds obj's Scale.
func scaleOf(res *registry.Resource, obj runtime.Object) (*autoscalingv1.Scale, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	spec, status, selector := res.Scale.Replicas(obj)
	return &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(),
			ResourceVersion: m.GetResourceVersion(), CreationTimestamp: m.GetCreationTimestamp()},
		Spec:   autoscalingv1.ScaleSpec{Replicas: spec},
		Status: autoscalingv1.ScaleStatus{Replicas: status, Selector: selector},
	}, nil
}

// scaled returns a copy of current resized to scale's replicas, carrying
// scale's resourceVersion as the write's precondition ("" for none).
func scaled(res *registry.Resource, current runtime.Object, scale *autoscalingv1.Scale) (runtime.Object, error) {
	obj := current.DeepCopyObject()
	res.Scale.SetReplicas(obj, scale.Spec.Replicas)
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	m.SetResourceVersion(scale.ResourceVersion)
	return obj, nil
}

// serveScale answers GET, PUT and PATCH on <object>/scale.
func (s *Server) serveScale(w http.ResponseWriter, req *http.Request, info *requestInfo, res *registry.Resource) error {
	out, err := negotiateOutput(req, targetObject)
	if err != nil {
		return err
	}
	scaleRes := scaleResource(res)
	var obj runtime.Object
	switch info.verb {
	case verbGet:
		opts, err := getOptions(req)
		if err != nil {
			return err
		}
		obj, err = s.store.Get(req.Context(), res, info.namespace, info.name, opts)
		if err != nil {
			return err
		}
	case verbUpdate, verbPatch:
		tryUpdate, err := s.scaleUpdate(req, info, res, scaleRes)
		if err != nil {
			return err
		}
		endStorage := reqtrace.From(req.Context()).Begin(reqtrace.Storage)
		obj, _, err = s.store.Update(req.Context(), res, info.namespace, info.name, registry.UpdateOptions{DryRun: isDryRun(req)}, tryUpdate)
		endStorage()
		if err != nil {
			return err
		}
	default:
		return apierrors.NewMethodNotSupported(res.GroupVersionResource().GroupResource(), info.verb)
	}
	scale, err := scaleOf(res, obj)
	if err != nil {
		return err
	}
	writeObject(w, req, scaleRes, out, http.StatusOK, scale)
	return nil
}

// scaleUpdate reads a PUT's Scale or a PATCH's patch or applied
// configuration and returns the update that applies it to the current
// object. The Scale's field manager records the request's manager (as
// owner of spec.replicas) in the object's managedFields.
func (s *Server) scaleUpdate(req *http.Request, info *requestInfo, res, scaleRes *registry.Resource) (registry.UpdateFunc, error) {
	body, err := readBody(req, s.cfg.MaxRequestBodyBytes)
	if err != nil {
		return nil, err
	}
	fm, err := fieldManagerFor(res, "scale")
	if err != nil {
		return nil, err
	}
	if info.verb == verbUpdate {
		opts, err := updateOptions(req)
		if err != nil {
			return nil, err
		}
		obj, _, err := decodeObject(req, body, scaleRes, metav1.FieldValidationStrict)
		if err != nil {
			return nil, err
		}
		if err := checkName(obj, info.name); err != nil {
			return nil, err
		}
		manager := managerName(opts.FieldManager, req.UserAgent())
		return s.admitted(req.Context(), info, res, isDryRun(req), scaleWrite(res, info, func(scale *autoscalingv1.Scale) (runtime.Object, error) {
			return fm.UpdateNoErrors(scale, obj.DeepCopyObject(), manager), nil
		})), nil
	}
	patchType, err := patchTypeOf(req)
	if err != nil {
		return nil, err
	}
	opts, err := patchOptions(req, patchType)
	if err != nil {
		return nil, err
	}
	opts.FieldValidation = metav1.FieldValidationStrict
	mechanism, err := newPatchMechanism(scaleRes, info, fm, patchType, opts, req.UserAgent(), body)
	if err != nil {
		return nil, err
	}
	return s.admitted(req.Context(), info, res, isDryRun(req), scaleWrite(res, info, func(scale *autoscalingv1.Scale) (runtime.Object, error) {
		return mechanism.apply(scale)
	})), nil
}

// scaleWrite is the UpdateFunc of a write through the scale subresource:
// change gets the current object's Scale, carrying the managedFields
// entries that own spec.replicas as entries of the Scale's
// spec.replicas, and returns the new Scale; its replicas and entries go
// back onto the object (managedfields.ScaleHandler), so that a manager
// who scaled owns the object's spec.replicas, as upstream records it.
func scaleWrite(res *registry.Resource, info *requestInfo, change func(*autoscalingv1.Scale) (runtime.Object, error)) registry.UpdateFunc {
	return func(current runtime.Object) (runtime.Object, error) {
		if current == nil {
			return nil, apierrors.NewNotFound(res.GroupVersionResource().GroupResource(), info.name)
		}
		m, err := meta.Accessor(current)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		handler := managedfields.NewScaleHandler(m.GetManagedFields(), res.GroupVersion, replicasPaths(res, m.GetManagedFields()))
		scale, err := scaleOf(res, current)
		if err != nil {
			return nil, err
		}
		if scale.ManagedFields, err = handler.ToSubresource(); err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("reading the managedFields of %s %q: %w", res.Kind, info.name, err))
		}
		changed, err := change(scale)
		if err != nil {
			return nil, err
		}
		newScale, ok := changed.(*autoscalingv1.Scale)
		if !ok {
			return nil, apierrors.NewInternalError(fmt.Errorf("a scale write produced a %T", changed))
		}
		obj, err := scaled(res, current, newScale)
		if err != nil {
			return nil, err
		}
		entries, err := handler.ToParent(newScale.ManagedFields)
		if err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("writing the managedFields of %s %q: %w", res.Kind, info.name, err))
		}
		objMeta, err := meta.Accessor(obj)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		objMeta.SetManagedFields(entries)
		return obj, nil
	}
}

// replicasPaths maps every API version the object's managedFields entries
// were recorded in (and the served one) to the path of its spec.replicas:
// res.Scale.ReplicasPath, spec.replicas by default.
func replicasPaths(res *registry.Resource, entries []metav1.ManagedFieldsEntry) managedfields.ResourcePathMappings {
	path := res.Scale.ReplicasPath
	if path == nil {
		path = fieldpath.MakePathOrDie("spec", "replicas")
	}
	paths := managedfields.ResourcePathMappings{res.GroupVersion.String(): path}
	for _, e := range entries {
		if gv, err := schema.ParseGroupVersion(e.APIVersion); err == nil && gv.Group == res.GroupVersion.Group {
			paths[e.APIVersion] = path
		}
	}
	return paths
}

// isDryRun reports whether the request asks for ?dryRun=All.
func isDryRun(req *http.Request) bool { return len(req.URL.Query()["dryRun"]) > 0 }
