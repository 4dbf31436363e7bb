package openapi

import (
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// OpenAPI schemas are derived from the Go types themselves, by reflection:
// the json tags give the field names, the patchStrategy and patchMergeKey
// tags the strategic-merge-patch hints kubectl apply needs (containers
// merge by name rather than being replaced), and the SwaggerDoc methods
// generated into k8s.io/api the descriptions kubectl explain prints. The
// result is close to upstream's schemas without a code generator; it lacks
// upstream's "required" lists and list-type markers.

// object is one JSON object of an OpenAPI document.
type object = map[string]any

// schemaBuilder collects the components a set of types needs. Components
// are named like upstream's, from the Go package path:
// k8s.io/api/core/v1.Pod is io.k8s.api.core.v1.Pod.
type schemaBuilder struct {
	v2         bool   // write OpenAPI v2 (Swagger) schemas instead of v3
	refPrefix  string // where references point: v3 components or v2 definitions
	components object // component name -> schema
}

func newSchemaBuilder(v2 bool) *schemaBuilder {
	b := &schemaBuilder{v2: v2, refPrefix: "#/components/schemas/", components: object{}}
	if v2 {
		b.refPrefix = "#/definitions/"
	}
	return b
}

// addKind adds the component of a top-level kind, marked with its
// group-version-kind as kubectl looks it up, and returns its name.
func (b *schemaBuilder) addKind(v any, gvk schema.GroupVersionKind) string {
	name := b.ref(reflect.TypeOf(v))
	b.components[name].(object)["x-kubernetes-group-version-kind"] = []object{gvkObject(gvk)}
	return name
}

func gvkObject(gvk schema.GroupVersionKind) object {
	return object{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind}
}

// ref adds the component for named type t (and everything it refers to),
// once, and returns the component's name.
func (b *schemaBuilder) ref(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	name := componentName(t)
	if _, done := b.components[name]; done {
		return name
	}
	s := object{}
	b.components[name] = s // before recursing, so self-references end here
	if doc := swaggerDoc(t)[""]; doc != "" {
		s["description"] = doc
	}
	if special := specialSchema(t, b.v2); special != nil {
		for k, v := range special {
			s[k] = v
		}
		return name
	}
	s["type"] = "object"
	if props := b.properties(t, object{}); len(props) > 0 {
		s["properties"] = props
	}
	return name
}

func componentName(t reflect.Type) string {
	path := strings.Split(t.PkgPath(), "/")
	domain := strings.Split(path[0], ".")
	for i, j := 0, len(domain)-1; i < j; i, j = i+1, j-1 {
		domain[i], domain[j] = domain[j], domain[i]
	}
	return strings.Join(append(append(domain, path[1:]...), t.Name()), ".")
}

// properties adds the JSON fields of struct t to props, flattening
// embedded structs tagged inline (TypeMeta) as encoding/json does.
func (b *schemaBuilder) properties(t reflect.Type, props object) object {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	docs := swaggerDoc(t)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" && f.Anonymous {
			b.properties(f.Type, props)
			continue
		}
		if name == "" {
			name = f.Name
		}
		p := b.fieldSchema(f.Type)
		if doc := docs[name]; doc != "" {
			p["description"] = doc
		}
		if key := f.Tag.Get("patchMergeKey"); key != "" {
			p["x-kubernetes-patch-merge-key"] = key
		}
		if strategy := f.Tag.Get("patchStrategy"); strategy != "" {
			p["x-kubernetes-patch-strategy"] = strategy
		}
		props[name] = p
	}
	return props
}

// fieldSchema is the schema of a value of type t inside another schema.
// Named structs are references; in v3 wrapped in allOf, as upstream does,
// so that the reference can carry a description and patch hints beside it.
func (b *schemaBuilder) fieldSchema(t reflect.Type) object {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return object{"type": "boolean"}
	case reflect.Int, reflect.Int32, reflect.Int16, reflect.Int8, reflect.Uint, reflect.Uint32, reflect.Uint16, reflect.Uint8:
		return object{"type": "integer", "format": "int32"}
	case reflect.Int64, reflect.Uint64:
		return object{"type": "integer", "format": "int64"}
	case reflect.Float32, reflect.Float64:
		return object{"type": "number", "format": "double"}
	case reflect.String:
		return object{"type": "string"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return object{"type": "string", "format": "byte"}
		}
		return object{"type": "array", "items": b.fieldSchema(t.Elem())}
	case reflect.Map:
		return object{"type": "object", "additionalProperties": b.fieldSchema(t.Elem())}
	case reflect.Struct:
		if t.Name() == "" {
			return object{"type": "object", "properties": b.properties(t, object{})}
		}
		ref := object{"$ref": b.refPrefix + b.ref(t)}
		if b.v2 {
			return ref
		}
		return object{"allOf": []object{ref}}
	default:
		return object{"type": "object"}
	}
}

// specialSchema is the schema of types that encode as JSON scalars
// (Time, Quantity, IntOrString): they say so through the same methods
// upstream's generator reads. v2 has no oneOf: the first type stands.
func specialSchema(t reflect.Type, v2 bool) object {
	v := reflect.New(t).Interface()
	typed, ok := v.(interface{ OpenAPISchemaType() []string })
	if !ok {
		return nil
	}
	s := object{}
	if oneOf, ok := v.(interface{ OpenAPIV3OneOfTypes() []string }); ok && !v2 {
		var alternatives []object
		for _, typ := range oneOf.OpenAPIV3OneOfTypes() {
			alternatives = append(alternatives, object{"type": typ})
		}
		s["oneOf"] = alternatives
	} else if types := typed.OpenAPISchemaType(); len(types) == 1 {
		s["type"] = types[0]
	}
	if f, ok := v.(interface{ OpenAPISchemaFormat() string }); ok && f.OpenAPISchemaFormat() != "" {
		s["format"] = f.OpenAPISchemaFormat()
	}
	if s["format"] == "int-or-string" && !v2 {
		s["x-kubernetes-int-or-string"] = true
	}
	return s
}

// swaggerDoc returns the field descriptions generated into k8s.io/api
// types, keyed by JSON name ("" describes the type itself).
func swaggerDoc(t reflect.Type) map[string]string {
	if t.Kind() != reflect.Struct {
		return nil
	}
	if d, ok := reflect.New(t).Interface().(interface{ SwaggerDoc() map[string]string }); ok {
		return d.SwaggerDoc()
	}
	return nil
}
