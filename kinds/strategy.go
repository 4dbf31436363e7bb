package kinds

// kindStrategy assembles a kind's rest.Strategy from its typed
// defaulting and validation and the rules every kind with a spec and a
// status shares.
//
// Spec, status and generation, the contract every controller relies on:
// metadata.generation is 1 when an object with a spec is created and grows
// by one with every change of its spec, never with a change of its status
// or metadata alone; a client writes the spec through the object and the
// status through its status subresource, and neither write can change the
// other half. Upstream writes these lines into each kind's strategy; here
// they are written once, for any kind whose Go type has a Spec or a Status
// field.

import (
	"minicp/registry/rest"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// structField returns obj's field named name, if obj is a pointer to a
// struct that has one.
func structField(obj runtime.Object, name string) (reflect.Value, bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	f := v.Elem().FieldByName(name)
	return f, f.IsValid() && f.CanSet()
}

// hasField reports whether objects of obj's type have a field named name
// ("Spec", "Status").
func hasField(obj runtime.Object, name string) bool {
	_, ok := structField(obj, name)
	return ok
}

// copyField sets obj's field name to old's (which must be of the same type).
func copyField(obj, old runtime.Object, name string) {
	dst, ok := structField(obj, name)
	if !ok {
		return
	}
	src, _ := structField(old, name)
	dst.Set(src)
}

// clearField sets obj's field name to its zero value.
func clearField(obj runtime.Object, name string) {
	if f, ok := structField(obj, name); ok {
		f.SetZero()
	}
}

// fieldChanged reports whether obj's and old's fields name differ
// semantically (a quantity of "1" equals one of "1000m").
func fieldChanged(obj, old runtime.Object, name string) bool {
	a, ok := structField(obj, name)
	if !ok {
		return false
	}
	b, _ := structField(old, name)
	return !equality.Semantic.DeepEqual(a.Interface(), b.Interface())
}

// createWithGeneration starts a new object's life: no status (a client
// cannot create an object with a status, the controller writes it), and
// generation 1 when it has a spec.
func createWithGeneration(obj runtime.Object) {
	clearField(obj, "Status")
	if hasField(obj, "Spec") {
		if m, err := meta.Accessor(obj); err == nil {
			m.SetGeneration(1)
		}
	}
}

// updateWithGeneration is an update of the object itself: it keeps the
// stored status, and bumps the generation when the spec changed. The
// generation obj carries is old's (beforeUpdate sets it: a client cannot).
func updateWithGeneration(obj, old runtime.Object) {
	copyField(obj, old, "Status")
	if fieldChanged(obj, old, "Spec") {
		if m, err := meta.Accessor(obj); err == nil {
			m.SetGeneration(m.GetGeneration() + 1)
		}
	}
}

// updateStatusOnly is an update through the status subresource: it keeps
// the stored spec (metadata is reset by the caller).
func updateStatusOnly(obj, old runtime.Object) {
	copyField(obj, old, "Spec")
}

// kindRules are one kind's own rules, typed.
type kindRules[T runtime.Object] struct {
	// name validates metadata.name; nil: a DNS subdomain.
	name validation.ValidateNameFunc
	// defaults fills what upstream defaults, on create and on update.
	defaults func(T)
	// validate and validateUpdate are the kind's checks beyond metadata.
	validate       func(T) field.ErrorList
	validateUpdate func(obj, old T) field.ErrorList
}

// kindStrategy assembles a Strategy: defaults, then the generic spec and
// status rules (a new object has generation 1 and no status; an update
// keeps the status and bumps the generation when the spec changed; a
// status update keeps the spec, for kinds with a status).
func kindStrategy[T runtime.Object](r kindRules[T]) *rest.Strategy {
	st := &rest.Strategy{ValidateName: r.name}
	if st.ValidateName == nil {
		st.ValidateName = validation.NameIsDNSSubdomain
	}
	st.PrepareForCreate = func(obj runtime.Object) {
		if r.defaults != nil {
			r.defaults(obj.(T))
		}
		createWithGeneration(obj)
	}
	st.PrepareForUpdate = func(obj, old runtime.Object) {
		if r.defaults != nil {
			r.defaults(obj.(T))
		}
		updateWithGeneration(obj, old)
	}
	if hasField(newOf[T](), "Status") {
		st.PrepareForStatusUpdate = updateStatusOnly
	}
	if r.validate != nil {
		st.Validate = func(obj runtime.Object) field.ErrorList { return r.validate(obj.(T)) }
	}
	if r.validateUpdate != nil {
		st.ValidateUpdate = func(obj, old runtime.Object) field.ErrorList { return r.validateUpdate(obj.(T), old.(T)) }
	}
	return st
}

// orphaning makes DELETE orphan the dependents by default.
func orphaning(st *rest.Strategy) *rest.Strategy {
	st.DefaultGCPolicy = rest.GCOrphan
	return st
}

// newOf returns an empty object of T (a pointer type).
func newOf[T runtime.Object]() runtime.Object {
	var zero T
	return reflect.New(reflect.TypeOf(zero).Elem()).Interface().(runtime.Object)
}
