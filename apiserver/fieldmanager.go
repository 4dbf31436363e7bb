package apiserver

// Field managers record who set which field of an object: every create,
// update, patch and apply passes the object it is about to write through a
// managedfields.FieldManager, which compares it with the stored object and
// writes the result into metadata.managedFields (one entry per manager,
// operation and subresource, with the set of fields that manager owns, in
// the FieldsV1 form). Server-side apply (apply.go) uses the same ownership
// to merge an applied configuration and to refuse, with 409 Conflict, a
// change to a field another manager owns. The entries are part of the
// object, so they are stored in etcd with it, as upstream stores them.
//
// As upstream's handlers do, the apiserver runs the field manager inside
// the store's compare-and-swap loop, before admission and before the
// resource's strategy: the strategy then drops what a write may not change
// (a main-resource write keeps the stored status), and the field manager's
// reset fields make ownership agree with it.

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"minicp/internal/trim"
	"minicp/registry"
	"minicp/registry/typeconverter"
)

// warmUp starts WarmUp's goroutine at most once per process.
var warmUp sync.Once

// WarmUp starts building, in the background, what the first write of the
// process would otherwise wait for: the built-in kinds' type converter
// (typeconverter.Builtin). It returns at once and does not delay
// readiness; New calls it, and so may a caller that wants the parse to
// overlap more of its start-up (controlplane calls it before etcd is
// elected). Only the first call starts a goroutine; that goroutine ends on
// its own when the parse is done, whether or not any server is still
// running, and is never started again, so a test that counts goroutines
// around a stack's Stop sees it at most once, at the first start.
func WarmUp() {
	warmUp.Do(func() {
		// Builds the converter and ends; no one waits for it, a write
		// that needs the converter waits on typeconverter.Builtin itself.
		go typeconverter.Builtin()
	})
}

// typeConverterOf returns res's type converter: its own (custom
// resources), else the built-in one.
func typeConverterOf(res *registry.Resource) managedfields.TypeConverter {
	if res.TypeConverter != nil {
		return res.TypeConverter
	}
	return typeconverter.Builtin()
}

// newFieldManager builds the field manager of res's writes through
// subresource ("" for the object itself, "status", "scale", ...); a write
// through "scale" is a Scale's (scaleResource). Building one is not free
// (the chain of managers apimachinery wraps around the type converter, the
// reset fields, the version converter), and every write, every Node Lease
// renewal among them, would pay it again; so each is built once and kept
// with its descriptor (fieldManagerFor).
func newFieldManager(res *registry.Resource, subresource string) (*managedfields.FieldManager, error) {
	if subresource == "scale" {
		res = scaleResource(res)
	}
	gvk := res.GroupVersionKind()
	tc := typeConverterOf(res)
	reset := resetFields(res, subresource)
	if _, unstructured := res.New().(runtime.Unstructured); unstructured {
		if res.TypeConverter == nil { // no schema: the structure of the object itself
			tc = managedfields.NewDeducedTypeConverter()
		}
		conv := unstructuredConvertor{}
		return managedfields.NewDefaultCRDFieldManager(tc, conv, conv, unstructuredCreater{}, gvk, gvk.GroupVersion(), subresource, reset)
	}
	return managedfields.NewDefaultFieldManager(tc, registry.Scheme, registry.Scheme, registry.Scheme, gvk, gvk.GroupVersion(), subresource, reset)
}

// fieldManagerFor returns the field manager of a write to res through
// subresource: the one kept with the descriptor (registry.Resource's
// FieldManager), built by newFieldManager on the descriptor's first write
// through that subresource. A field manager is safe for concurrent use,
// so every request shares it. A failure to build one is a 500 that names
// the kind; the type converters themselves are built lazily, so one that
// cannot describe the kind fails only when a write uses it.
func fieldManagerFor(res *registry.Resource, subresource string) (*managedfields.FieldManager, error) {
	fm, err := res.FieldManager(subresource, func() (*managedfields.FieldManager, error) {
		return newFieldManager(res, subresource)
	})
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("no field manager for %s: %w", res.GroupVersionKind(), err))
	}
	return fm, nil
}

// statusPath and the metadata paths below are the fields a write of the
// main resource or of its status subresource does not change: the
// strategy resets them (rest.Strategy's PrepareForUpdate keeps the
// stored status; PrepareForStatusUpdate the stored spec, and
// metav1.ResetObjectMetaForStatus the labels, annotations, finalizers and
// owner references). A manager never owns a field its write could not set.
var (
	mainResetFields   = fieldpath.NewSet(fieldpath.MakePathOrDie("status"))
	statusResetFields = fieldpath.NewSet(
		fieldpath.MakePathOrDie("spec"),
		fieldpath.MakePathOrDie("metadata", "labels"),
		fieldpath.MakePathOrDie("metadata", "annotations"),
		fieldpath.MakePathOrDie("metadata", "finalizers"),
		fieldpath.MakePathOrDie("metadata", "ownerReferences"),
	)
)

// resetFields is upstream's per-strategy GetResetFields for minicp's
// strategies: resources with a status subresource keep status out of
// main-resource writes and spec out of status writes; others reset nothing.
func resetFields(res *registry.Resource, subresource string) map[fieldpath.APIVersion]fieldpath.Filter {
	if !res.HasSubresource("status") {
		return nil
	}
	version := fieldpath.APIVersion(res.GroupVersion.String())
	switch subresource {
	case "":
		return map[fieldpath.APIVersion]fieldpath.Filter{version: fieldpath.NewExcludeSetFilter(mainResetFields)}
	case "status":
		return map[fieldpath.APIVersion]fieldpath.Filter{version: fieldpath.NewExcludeSetFilter(statusResetFields)}
	}
	return nil
}

// managerName is the manager a write is recorded under: the fieldManager
// query parameter when there is one (already validated), else the
// User-Agent's product, as upstream derives it: what precedes the first
// "/" ("kubectl" for "kubectl/v1.33.0 (linux/amd64) ..."; a client-go
// program's binary name), without unprintable characters, cut to the
// 128 bytes a fieldManager may have.
func managerName(fieldManager, userAgent string) string {
	if fieldManager != "" {
		return fieldManager
	}
	product, _, _ := strings.Cut(userAgent, "/")
	var b bytes.Buffer
	for _, r := range product {
		if !unicode.IsPrint(r) {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > metav1validation.FieldManagerMaxLength {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// retryWithoutManagedFields runs write, a create or an update, and once
// more if the store refused what it wrote as too large to store (413)
// and the write may shed its managedFields: upstream then drops them
// (they can be large) and tries again, for every write but an apply
// (whose managedFields are what it is about). write's dropManagedFields
// says which try it is.
func retryWithoutManagedFields(mayDrop bool, write func(dropManagedFields bool) error) error {
	err := write(false)
	if mayDrop && apierrors.IsRequestEntityTooLargeError(err) {
		err = write(true)
	}
	return err
}

// withoutManagedFields wraps an update so that what it writes carries no
// managedFields: the second try of a write that was too large.
func withoutManagedFields(tryUpdate registry.UpdateFunc) registry.UpdateFunc {
	return func(current runtime.Object) (runtime.Object, error) {
		obj, err := tryUpdate(current)
		if err != nil {
			return nil, err
		}
		trim.DropManagedFields(obj)
		return obj, nil
	}
}
