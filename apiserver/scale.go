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
	"net/http"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"minicp/registry"
	"minicp/reqtrace"
)

// scaleResource describes the Scale kind for decoding and encoding (it
// has no storage of its own).
func scaleResource(res *registry.Resource) *registry.Resource {
	return &registry.Resource{
		GroupVersion: autoscalingv1.SchemeGroupVersion, Name: res.Name, Kind: "Scale", ListKind: "ScaleList",
		Namespaced: res.Namespaced,
		New:        func() runtime.Object { return &autoscalingv1.Scale{} },
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

// scaleUpdate reads a PUT's Scale or a PATCH's patch and returns the
// update that applies it to the current object.
func (s *Server) scaleUpdate(req *http.Request, info *requestInfo, res, scaleRes *registry.Resource) (registry.UpdateFunc, error) {
	body, err := readBody(req, s.cfg.MaxRequestBodyBytes)
	if err != nil {
		return nil, err
	}
	notFound := func() error { return apierrors.NewNotFound(res.GroupVersionResource().GroupResource(), info.name) }
	if info.verb == verbUpdate {
		obj, _, err := decodeObject(req, body, scaleRes, metav1.FieldValidationStrict)
		if err != nil {
			return nil, err
		}
		if err := checkName(obj, info.name); err != nil {
			return nil, err
		}
		scale := obj.(*autoscalingv1.Scale)
		return s.admitted(req.Context(), info, res, isDryRun(req), func(current runtime.Object) (runtime.Object, error) {
			if current == nil {
				return nil, notFound()
			}
			return scaled(res, current, scale)
		}), nil
	}
	patchType := types.PatchType(mediaTypeOf(req.Header.Get("Content-Type")))
	switch patchType {
	case types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType:
	default:
		return nil, unsupportedMediaType(servedPatchTypes)
	}
	p := &patcher{res: scaleRes, info: info, patchType: patchType, patch: body, validation: metav1.FieldValidationStrict}
	if err := p.parse(); err != nil {
		return nil, err
	}
	return s.admitted(req.Context(), info, res, isDryRun(req), func(current runtime.Object) (runtime.Object, error) {
		if current == nil {
			return nil, notFound()
		}
		scale, err := scaleOf(res, current)
		if err != nil {
			return nil, err
		}
		patched, err := p.apply(scale)
		if err != nil {
			return nil, err
		}
		return scaled(res, current, patched.(*autoscalingv1.Scale))
	}), nil
}

// isDryRun reports whether the request asks for ?dryRun=All.
func isDryRun(req *http.Request) bool { return len(req.URL.Query()["dryRun"]) > 0 }
