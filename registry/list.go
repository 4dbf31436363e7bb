package registry

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// maxPageRead caps how many keys one etcd range request of a paged,
// filtered list asks for, as upstream does.
const maxPageRead = 10000

// List reads the objects under the resource's (and namespace's) key prefix
// with one range request, or several when paging. The list's
// resourceVersion is the revision of the read, from etcd's response header.
//
// ResourceVersion rules: "" is a quorum read at the current revision; "0" a
// serializable read of whatever the member has; "N" (NotOlderThan, the
// default) a current read that must be at N or later; "N" with Exact a read
// at revision N itself (410 once compacted). With limit, each page is read
// at the revision of the first, carried in the continue token.
func (s *Store) List(ctx context.Context, res *Resource, namespace string, opts ListOptions) (runtime.Object, error) {
	if err := validateListOptions(opts, false); err != nil {
		return nil, err
	}
	pred, err := newPredicate(res, opts.LabelSelector, opts.FieldSelector)
	if err != nil {
		return nil, err
	}
	minRev, err := resourceVersionToRevision(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	q := &listQuery{
		res: res, pred: pred, limit: opts.Limit,
		keyPrefix: keyPrefixFor(res, namespace), serializable: opts.ResourceVersion == "0",
	}
	q.fromKey = q.keyPrefix
	switch {
	case opts.Continue != "":
		if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
			return nil, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		key, rev, err := decodeContinue(opts.Continue, q.keyPrefix)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid continue token: %v", err))
		}
		q.fromKey, q.continuing = key, true
		if rev > 0 { // -1: go on at the current revision
			q.atRev = rev
		}
	case opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact:
		q.atRev = minRev
	case opts.ResourceVersionMatch == "" && opts.Limit > 0 && minRev > 0:
		// Legacy paged list at N: upstream reads at exactly N.
		q.atRev = minRev
	default:
		q.minRev = minRev
	}
	return s.runList(ctx, q)
}

// listQuery is one LIST being answered, page by page.
type listQuery struct {
	res          *Resource
	pred         *predicate
	keyPrefix    string // what the list ranges over, ends with "/"
	fromKey      string // where the next range read starts
	limit        int64  // 0: no paging
	continuing   bool   // fromKey came from a continue token
	serializable bool
	atRev        int64 // read at this revision; 0: the current one
	minRev       int64 // the current revision must be at least this
}

func (s *Store) runList(ctx context.Context, q *listQuery) (runtime.Object, error) {
	var (
		items    []runtime.Object
		lastKey  []byte
		hasMore  bool
		resp     *clientv3.GetResponse
		readSize = q.limit
	)
	for {
		var err error
		if resp, err = s.readPage(ctx, q, readSize); err != nil {
			return nil, err
		}
		if q.atRev == 0 {
			// Later pages read at the first page's revision. (With WithRev,
			// the header carries etcd's current revision, not the one read.)
			q.atRev = resp.Header.Revision
		}
		hasMore = resp.More
		for _, kv := range resp.Kvs {
			if q.limit > 0 && int64(len(items)) >= q.limit {
				hasMore = true
				break
			}
			lastKey = kv.Key
			obj, err := s.decode(q.res, kv.Value, kv.ModRevision)
			if err != nil {
				return nil, err
			}
			if q.pred.matches(obj) {
				items = append(items, obj)
			}
		}
		if q.limit == 0 || !hasMore || int64(len(items)) >= q.limit {
			break
		}
		// The selector filtered some out: read on, in bigger chunks.
		q.fromKey = string(lastKey) + "\x00"
		readSize = min(readSize*2, maxPageRead)
	}

	list := q.res.NewList()
	if err := meta.SetList(list, items); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if err := stampList(list, q.atRev); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if hasMore {
		token, err := encodeContinue(string(lastKey)+"\x00", q.keyPrefix, q.atRev)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		lm.SetContinue(token)
		if q.pred.empty() {
			remaining := resp.Count - q.limit
			lm.SetRemainingItemCount(&remaining)
		}
	}
	return list, nil
}

// readPage reads up to size keys (all when size is 0) from q.fromKey to the
// end of q.keyPrefix, at q.atRev or, for the first page, at a current
// revision of at least q.minRev.
func (s *Store) readPage(ctx context.Context, q *listQuery, size int64) (*clientv3.GetResponse, error) {
	var resp *clientv3.GetResponse
	read := func(ctx context.Context) (int64, error) {
		getOpts := []clientv3.OpOption{clientv3.WithRange(clientv3.GetPrefixRangeEnd(q.keyPrefix))}
		if size > 0 {
			getOpts = append(getOpts, clientv3.WithLimit(size))
		}
		if q.atRev > 0 {
			getOpts = append(getOpts, clientv3.WithRev(q.atRev))
		}
		if q.serializable {
			getOpts = append(getOpts, clientv3.WithSerializable())
		}
		var err error
		resp, err = s.client.Get(ctx, q.fromKey, getOpts...)
		if err != nil {
			return 0, err
		}
		return resp.Header.Revision, nil
	}
	err := s.readNotOlderThan(ctx, q.minRev, read)
	if isFutureRevision(err) {
		// Asked to read at a revision etcd has not reached: wait for it.
		current := func(ctx context.Context) (int64, error) { return s.currentRevisionOf(ctx, q.res) }
		if err = s.readNotOlderThan(ctx, q.atRev, current); err == nil {
			_, err = read(ctx)
		}
	}
	if err != nil {
		return nil, s.listError(err, q)
	}
	return resp, nil
}

// currentRevision asks the main etcd cluster (with a quorum read of one
// key) for its revision.
func (s *Store) currentRevision(ctx context.Context) (int64, error) {
	return s.revisionAt(ctx, "/registry")
}

// currentRevisionOf asks the etcd cluster that holds res's keys for its
// revision: with --etcd-servers-overrides, events live in a cluster whose
// revisions count that cluster's writes only.
func (s *Store) currentRevisionOf(ctx context.Context, res *Resource) (int64, error) {
	return s.revisionAt(ctx, keyPrefixFor(res, ""))
}

// revisionAt reads the revision of the cluster holding key, with a
// count-only quorum read of that one key.
func (s *Store) revisionAt(ctx context.Context, key string) (int64, error) {
	resp, err := s.client.Get(ctx, key, clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
	return resp.Header.Revision, nil
}

// validateListOptions applies upstream's rules on combinations of
// resourceVersion, resourceVersionMatch, continue and sendInitialEvents
// (422 Invalid on ListOptions).
func validateListOptions(opts ListOptions, watch bool) error {
	internal := &internalversion.ListOptions{
		ResourceVersion:      opts.ResourceVersion,
		ResourceVersionMatch: opts.ResourceVersionMatch,
		Continue:             opts.Continue,
		Limit:                opts.Limit,
		Watch:                watch,
		AllowWatchBookmarks:  opts.AllowWatchBookmarks,
		SendInitialEvents:    opts.SendInitialEvents,
	}
	if errs := metavalidation.ValidateListOptions(internal, true); len(errs) > 0 {
		return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	return nil
}

// ValidateListOptions applies upstream's rules on combinations of list (or,
// with watch, watch) options: 422 Invalid on ListOptions.
func ValidateListOptions(opts ListOptions, watch bool) error { return validateListOptions(opts, watch) }

// KeyPrefix is the etcd key prefix a LIST or WATCH of res in namespace ("":
// all) ranges over, ending with "/".
func KeyPrefix(res *Resource, namespace string) string { return keyPrefixFor(res, namespace) }

// CurrentRevision returns etcd's current revision with one linearizable,
// count-only read: the cheap "what is now" a consistent read from the watch
// cache waits for.
func (s *Store) CurrentRevision(ctx context.Context) (int64, error) {
	rev, err := s.currentRevision(ctx)
	return rev, storageError(err)
}

// CurrentRevisionOf is CurrentRevision for the etcd cluster that holds
// res's keys, which differs from the main one for resources moved by
// Options.EtcdOverrides (events).
func (s *Store) CurrentRevisionOf(ctx context.Context, res *Resource) (int64, error) {
	rev, err := s.currentRevisionOf(ctx, res)
	return rev, storageError(err)
}
