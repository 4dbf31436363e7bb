// Package typeconverter holds the process-wide type converters of
// server-side apply (registry.Resource.TypeConverter), each built once per
// process, on its first use, and shared by every stack in it: a converter
// holds nothing but the schema it parsed, and parsing one is costly. The
// built-in kinds' converter (Builtin) comes from the schema client-go
// compiles into its apply configurations; that schema has no
// CustomResourceDefinition and no autoscaling/v1 Scale, which
// apiextensions-apiserver's generated OpenAPI definitions have: Generated
// types those two. A custom resource's converter is built from its CRD's
// schema, lazily too (Lazy).
package typeconverter

import (
	"sync"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	generatedopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"minicp/registry"
)

// Builtin returns the type converter of every built-in kind: the schema
// compiled into client-go's apply configurations, looked up by the Go type
// of registry.Scheme's kinds. The first call parses it; every later call,
// from any stack, returns the same converter, and a call made while the
// parse runs waits for it instead of starting another.
var Builtin = sync.OnceValue(func() managedfields.TypeConverter {
	return applyconfigurations.NewTypeConverter(registry.Scheme)
})

// Generated types apiextensions.k8s.io/v1 CustomResourceDefinitions and
// autoscaling/v1 Scales. It is built on its first use (most stacks never
// write a CRD or a Scale).
var Generated = Lazy(newGeneratedTypeConverter)

// newGeneratedTypeConverter parses apiextensions' generated models, each
// kind's model marked with its group-version-kind, as the converter finds
// a kind's model by it.
func newGeneratedTypeConverter() (managedfields.TypeConverter, error) {
	defs := generatedopenapi.GetOpenAPIDefinitions(func(name string) spec.Ref {
		return spec.MustCreateRef("#/definitions/" + name)
	})
	models := make(map[string]*spec.Schema, len(defs))
	for name, def := range defs {
		models[name] = &def.Schema
	}
	kinds := map[string]schema.GroupVersionKind{
		apiextensionsv1.CustomResourceDefinition{}.OpenAPIModelName(): apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"),
		autoscalingv1.Scale{}.OpenAPIModelName():                      autoscalingv1.SchemeGroupVersion.WithKind("Scale"),
	}
	for name, gvk := range kinds {
		models[name].AddExtension("x-kubernetes-group-version-kind", []any{
			map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind},
		})
	}
	return managedfields.NewTypeConverter(models, false)
}

// Lazy returns a type converter that calls build on its first
// use, then behaves as what build returned; a converter that could not be
// built fails every call with the reason. Converters take milliseconds to
// build from a schema, and most are never used by a given stack.
func Lazy(build func() (managedfields.TypeConverter, error)) managedfields.TypeConverter {
	return &lazyTypeConverter{build: build}
}

// lazyTypeConverter is Lazy's converter.
type lazyTypeConverter struct {
	once  sync.Once // guards tc and err, set once by build
	build func() (managedfields.TypeConverter, error)
	tc    managedfields.TypeConverter
	err   error
}

func (l *lazyTypeConverter) get() (managedfields.TypeConverter, error) {
	l.once.Do(func() { l.tc, l.err = l.build() })
	return l.tc, l.err
}

func (l *lazyTypeConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	tc, err := l.get()
	if err != nil {
		return nil, err
	}
	return tc.ObjectToTyped(obj, opts...)
}

func (l *lazyTypeConverter) TypedToObject(value *typed.TypedValue) (runtime.Object, error) {
	tc, err := l.get()
	if err != nil {
		return nil, err
	}
	return tc.TypedToObject(value)
}
