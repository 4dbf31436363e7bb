package registry

// This file is the only place where a resourceVersion is turned into an etcd
// revision or back (M4):
//
//   - an object's resourceVersion is its key's mod revision (the revision of
//     the last write to the key), not its create revision;
//   - a list's resourceVersion is the revision the range read was served at
//     (the response header's revision), which may be newer than every item;
//   - a write returns the object stamped with the revision of its own
//     transaction, a delete the last state stamped with the deletion's.
//
// A resourceVersion is therefore opaque to clients: comparing the versions of
// two different objects tells nothing about which was written first (M7).

import (
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// revisionToResourceVersion formats an etcd revision as a resourceVersion.
func revisionToResourceVersion(rev int64) string {
	return strconv.FormatInt(rev, 10)
}

// resourceVersionToRevision parses a resourceVersion a client sent. "" and
// "0" both give 0, which callers read as "no particular revision". Anything
// that is not a non-negative integer is a 400 BadRequest, worded as upstream.
func resourceVersionToRevision(rv string) (int64, error) {
	if rv == "" || rv == "0" {
		return 0, nil
	}
	rev, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || rev < 0 {
		reason := "must be a non-negative integer"
		if err != nil {
			reason = err.Error()
		}
		errs := field.ErrorList{field.Invalid(field.NewPath("resourceVersion"), rv, reason)}
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %v", errs.ToAggregate()))
	}
	return rev, nil
}

// objectRevision returns the revision an object's resourceVersion names, or 0
// when it carries none.
func objectRevision(obj runtime.Object) (int64, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return 0, apierrors.NewInternalError(err)
	}
	return resourceVersionToRevision(m.GetResourceVersion())
}

// stampObject sets an object's resourceVersion to rev.
func stampObject(obj runtime.Object, rev int64) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	m.SetResourceVersion(revisionToResourceVersion(rev))
	return nil
}

// stampList sets a list's resourceVersion to rev, the revision it was read at.
func stampList(list runtime.Object, rev int64) error {
	m, err := meta.ListAccessor(list)
	if err != nil {
		return err
	}
	m.SetResourceVersion(revisionToResourceVersion(rev))
	return nil
}

// clearResourceVersion empties the resourceVersion (and the long-gone
// selfLink) before an object is written, as upstream's
// PrepareObjectForStorage does: the version lives in the key's metadata.
func clearResourceVersion(obj runtime.Object) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	m.SetResourceVersion("")
	m.SetSelfLink("")
	return nil
}

// The exported forms below let the watch cache (package watchcache) read and
// stamp resourceVersions exactly as the Store does, without a second copy of
// the rules.

// ParseResourceVersion parses a resourceVersion a client sent: "" and "0"
// give 0; anything but a non-negative integer is upstream's 400.
func ParseResourceVersion(rv string) (int64, error) { return resourceVersionToRevision(rv) }

// StampObject sets an object's resourceVersion to the revision rev.
func StampObject(obj runtime.Object, rev int64) error { return stampObject(obj, rev) }

// StampList sets a list's resourceVersion to the revision it was read at.
func StampList(list runtime.Object, rev int64) error { return stampList(list, rev) }

// FormatResourceVersion is the resourceVersion of revision rev, for a
// request to the registry (the watch cache's own list and watch).
func FormatResourceVersion(rev int64) string { return revisionToResourceVersion(rev) }
