package apiserver

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"minicp/registry"
	"minicp/reqtrace"
)

// DELETE on a collection (verb deletecollection): upstream's generic store
// lists what the query's selectors match and deletes it item by item (one
// worker by default), skipping items already gone and stopping at the
// first other failure; the answer is the list of what was deleted. It is
// not atomic: a failure half-way leaves the items before it deleted, as
// upstream does. Admission sees one DELETE with no name.
//
// Upstream serves it on namespaced collections within a namespace and on
// cluster-scoped collections whose storage has a collection delete (every
// one but namespaces): Resource.DeleteCollection.

// collectionDeletable reports whether res has the deletecollection verb.
func collectionDeletable(res *registry.Resource) bool { return res.DeleteCollection }

// deleteCollectionAllowed reports whether res's collection may be deleted
// at the path of info: not across all namespaces.
func deleteCollectionAllowed(info *requestInfo, res *registry.Resource) bool {
	return collectionDeletable(res) && (!res.Namespaced || info.namespace != "")
}

func (s *Server) deleteCollection(w http.ResponseWriter, req *http.Request, info *requestInfo, res *registry.Resource) error {
	out, err := negotiateOutput(req, targetList)
	if err != nil {
		return err
	}
	listOpts, _, err := listOptions(req, info)
	if err != nil {
		return err
	}
	opts, err := s.admitDelete(req, info, res)
	if err != nil {
		return err
	}
	endStorage := reqtrace.From(req.Context()).Begin(reqtrace.Storage)
	deleted, err := s.deleteMatching(req, info, res, listOpts, opts)
	endStorage()
	if err != nil {
		return err
	}
	writeObject(w, req, res, out, http.StatusOK, deleted)
	return nil
}

// deleteMatching lists the collection and deletes every item in it, in
// order, and returns the deleted items as a list at the list's
// resourceVersion.
func (s *Server) deleteMatching(req *http.Request, info *requestInfo, res *registry.Resource, listOpts registry.ListOptions, opts registry.DeleteOptions) (runtime.Object, error) {
	ctx := req.Context()
	list, err := s.store.List(ctx, res, info.namespace, listOpts)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	deleted := make([]runtime.Object, 0, len(items))
	for _, item := range items {
		m, err := meta.Accessor(item)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		gone, err := s.store.Delete(ctx, res, m.GetNamespace(), m.GetName(), opts)
		switch {
		case apierrors.IsNotFound(err): // deleted meanwhile: not an error, as upstream
			continue
		case err != nil:
			return nil, err
		case gone == nil:
			return nil, apierrors.NewInternalError(fmt.Errorf("the store returned no object for the deletion of %s %q", res.Kind, m.GetName()))
		}
		deleted = append(deleted, gone)
	}
	out := res.NewList()
	if err := meta.SetList(out, deleted); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if accessor, err := meta.ListAccessor(list); err == nil {
		if listMeta, err := meta.ListAccessor(out); err == nil {
			listMeta.SetResourceVersion(accessor.GetResourceVersion())
		}
	}
	return out, nil
}
