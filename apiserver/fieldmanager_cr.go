package apiserver

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// unstructuredConvertor is the object convertor and defaulter of a custom
// resource's field manager. Custom resources are *unstructured.Unstructured
// and their versions differ only in apiVersion (the None conversion
// strategy, the only one minicp runs), so converting one is copying it
// with the target apiVersion. Defaulting from the CRD's schema is the
// resource's strategy's job, after the field manager, so Default does
// nothing.
type unstructuredConvertor struct{}

var (
	_ runtime.ObjectConvertor = unstructuredConvertor{}
	_ runtime.ObjectDefaulter = unstructuredConvertor{}
)

func (unstructuredConvertor) Convert(in, out, _ any) error {
	from, ok := in.(*unstructured.Unstructured)
	to, ok2 := out.(*unstructured.Unstructured)
	if !ok || !ok2 {
		return fmt.Errorf("a custom resource converts only between unstructured objects, not %T to %T", in, out)
	}
	to.Object = runtime.DeepCopyJSON(from.Object)
	return nil
}

func (unstructuredConvertor) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("a custom resource must be unstructured, not %T", in)
	}
	gvk := u.GroupVersionKind()
	to, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{gvk})
	if !ok {
		return nil, fmt.Errorf("%s cannot be converted to %v", gvk, target)
	}
	out := u.DeepCopy()
	out.SetGroupVersionKind(to)
	return out, nil
}

func (unstructuredConvertor) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

func (unstructuredConvertor) Default(runtime.Object) {}

// unstructuredCreater makes the empty object a custom resource's field
// manager compares a create against.
type unstructuredCreater struct{}

func (unstructuredCreater) New(kind schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(kind)
	return u, nil
}
