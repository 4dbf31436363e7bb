package registry

// This file is the only place where etcd's errors become Kubernetes API
// errors. Every error the Store returns is a *apierrors.StatusError with the
// code, reason and message kube-apiserver would send in the same situation.

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Messages kube-apiserver uses, word for word.
const (
	// optimisticLockErrorMsg is the tail of the 409 a stale update gets.
	optimisticLockErrorMsg = "the object has been modified; please apply your changes to the latest version and try again"
	// listExpiredMsg: a LIST at an exact revision that etcd has compacted.
	listExpiredMsg = "The resourceVersion for the provided list is too old."
	// continueExpiredMsg: a continue token whose revision was compacted.
	continueExpiredMsg = "The provided continue parameter is too old to display a consistent list result. " +
		"You can start a new list without the continue parameter."
	// inconsistentContinueMsg: as above, when a token to go on at the
	// current revision can be offered instead.
	inconsistentContinueMsg = "The provided continue parameter is too old to display a consistent list result. " +
		"You can start a new list without the continue parameter, or use the continue token in this response to " +
		"retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - " +
		"objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."
	// noSpaceAdvice tells an operator how to get out of etcd's NOSPACE alarm.
	noSpaceAdvice = "etcd's backend quota is exhausted and it accepts only reads and deletes; " +
		"to recover, compact old revisions (minictl etcd compact --keep 0, or etcdctl compact <current revision>), " +
		"defragment every member (minictl etcd defrag, or etcdctl defrag), then disarm the alarm " +
		"(minictl etcd alarm disarm, or etcdctl alarm disarm), or raise --quota-backend-bytes"
)

// tooLargeResourceVersionRetrySeconds is the Retry-After of the 504 a read
// gets when it asks for a revision etcd has not reached (upstream: 1).
const tooLargeResourceVersionRetrySeconds = 1

// StorageError is storageError for the kinds' write hooks, whose etcd
// requests fail as the Store's do.
func StorageError(err error) error { return storageError(err) }

// storageError translates an error from the etcd client into an API error.
// API errors pass through unchanged.
func storageError(err error) error {
	if err == nil {
		return nil
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return err
	}
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		return apierrors.NewResourceExpired(listExpiredMsg)
	case errors.Is(err, rpctypes.ErrNoSpace):
		return apierrors.NewInternalError(fmt.Errorf("%v: %s", err, noSpaceAdvice))
	case errors.Is(err, rpctypes.ErrRequestTooLarge):
		return apierrors.NewRequestEntityTooLargeError(err.Error())
	case errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, rpctypes.ErrTimeout),
		errors.Is(err, rpctypes.ErrTimeoutDueToLeaderFail),
		errors.Is(err, rpctypes.ErrTimeoutDueToConnectionLost):
		return apierrors.NewTimeoutError(fmt.Sprintf("request to etcd did not complete: %v", err), 0)
	}
	return apierrors.NewInternalError(err)
}

// noSpaceWrite is the error of a create or update etcd answered NOSPACE.
// etcd checks the quota twice: before it proposes a write (a write that
// does not fit is refused there, and the alarm raised) and again when it
// applies it (a write that passed the first check but no longer fits is
// applied, answered NOSPACE, and the alarm raised). appliedAt says which:
// the revision etcd stored the write at, 0 if it refused it, -1 if reading
// the key back failed and nobody knows.
func noSpaceWrite(err error, appliedAt int64) error {
	var what string
	switch {
	case appliedAt > 0:
		what = fmt.Sprintf("etcd applied this write at revision %d and then raised the alarm: "+
			"it is stored (resourceVersion %d), do not repeat it", appliedAt, appliedAt)
	case appliedAt == 0:
		what = "etcd refused this write before applying it: nothing was written"
	default:
		what = "etcd may have applied this write before raising the alarm: read the object back before repeating it"
	}
	return apierrors.NewInternalError(fmt.Errorf("%v: %s; %s", err, what, noSpaceAdvice))
}

// qualifiedResource is how messages name a resource: "pods",
// "leases.coordination.k8s.io".
func qualifiedResource(res *Resource) schema.GroupResource {
	return res.GroupVersionResource().GroupResource()
}

func notFound(res *Resource, name string) error {
	return apierrors.NewNotFound(qualifiedResource(res), name)
}

func alreadyExists(res *Resource, name string) error {
	return apierrors.NewAlreadyExists(qualifiedResource(res), name)
}

// conflict is the 409 of an update whose resourceVersion is not the current
// one: `Operation cannot be fulfilled on pods "x": the object has been
// modified; please apply your changes to the latest version and try again`.
func conflict(res *Resource, name string) error {
	return apierrors.NewConflict(qualifiedResource(res), name, errors.New(optimisticLockErrorMsg))
}

// preconditionFailed is the 409 of a delete whose preconditions do not hold.
// Upstream wraps a storage error here, and its text shows through.
func preconditionFailed(res *Resource, name, key, msg string) error {
	const errCodeInvalidObj = 4 // k8s.io/apiserver/pkg/storage.ErrCodeInvalidObj
	err := fmt.Errorf("StorageError: invalid object, Code: %d, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: %s",
		errCodeInvalidObj, key, msg)
	return apierrors.NewConflict(qualifiedResource(res), name, err)
}

// tooLargeResourceVersion is the 504 a read gets when it asks for a
// revision newer than etcd's current one; client-go recognises it by its
// cause and retries.
func tooLargeResourceVersion(minimum, current int64) error {
	err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", minimum, current),
		tooLargeResourceVersionRetrySeconds)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type:    metav1.CauseTypeResourceVersionTooLarge,
		Message: "Too large resource version",
	}}
	return err
}

// watchTooOld is the ERROR event of a watch whose start revision etcd has
// compacted: rv is what the client asked for, compactRev etcd's compaction
// revision. The number in parentheses is the oldest resourceVersion a
// watch can still start from, as in upstream's watch cache message.
func watchTooOld(rv, compactRev int64) *apierrors.StatusError {
	return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", rv, compactRev-1))
}

// NotFound is the 404 of a missing object: `pods "x" not found`.
func NotFound(res *Resource, name string) error { return notFound(res, name) }

// TooLargeResourceVersion is the 504 (with cause ResourceVersionTooLarge and
// Retry-After 1) of a read asking for a revision not reached yet.
func TooLargeResourceVersion(minimum, current int64) error {
	return tooLargeResourceVersion(minimum, current)
}

// WatchTooOld is the 410 Expired "too old resource version: rv (oldest-1)"
// of a watch whose start is no longer available; oldest is the first
// revision whose events still are (etcd's compaction revision, or the first
// event a watch cache still holds).
func WatchTooOld(rv, oldest int64) *apierrors.StatusError { return watchTooOld(rv, oldest) }

// listError translates a failed range read. A compacted continue token gets
// upstream's 410 with a fresh token that goes on at the current revision.
func (s *Store) listError(err error, q *listQuery) error {
	if !isCompacted(err) || !q.continuing {
		return storageError(err)
	}
	token, encErr := encodeContinue(q.fromKey, q.keyPrefix, -1)
	if encErr != nil {
		return apierrors.NewResourceExpired(continueExpiredMsg)
	}
	status := apierrors.NewResourceExpired(inconsistentContinueMsg)
	status.ErrStatus.ListMeta.Continue = token
	return status
}

// The etcd errors the Store reacts to before (or instead of) translating
// them: every look at an etcd error's identity is here.

// isCompacted: the revision asked for is older than etcd's history.
func isCompacted(err error) bool { return errors.Is(err, rpctypes.ErrCompacted) }

// isFutureRevision: the revision asked for is newer than etcd's.
func isFutureRevision(err error) bool { return errors.Is(err, rpctypes.ErrFutureRev) }

// isNoSpace: etcd is out of quota (the NOSPACE alarm) and refuses writes.
func isNoSpace(err error) bool { return errors.Is(err, rpctypes.ErrNoSpace) }

// isLeaseNotFound: a write or KeepAlive named a lease etcd no longer has.
func isLeaseNotFound(err error) bool { return errors.Is(err, rpctypes.ErrLeaseNotFound) }

// apiStatusOf returns err when it is (or wraps) an API Status, as a
// storage codec returns one to say why an object cannot be read or
// written (a custom resource needing a conversion webhook), else nil.
func apiStatusOf(err error) error {
	var status apierrors.APIStatus
	if err != nil && errors.As(err, &status) {
		return err
	}
	return nil
}
