package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"minicp/apiserver/admission"
	"minicp/internal/trim"
	"minicp/registry"
	"minicp/reqtrace"
)

// restHandler serves one verb on one resource. It returns the error to
// answer with (always turned into a Status by writeError) or writes the
// response itself.
type restHandler func(s *Server, w http.ResponseWriter, req *http.Request, info *requestInfo, res *registry.Resource) error

// routeVerb picks the handler for a request on a known resource, or nil
// when the method is not served at that path (405). allowed lists the
// methods that are, for the Allow header.
func routeVerb(info *requestInfo, res *registry.Resource) (h restHandler, allowed []string) {
	switch {
	case info.subresource == "finalize": // namespaces: replaced, never read
		allowed = []string{http.MethodPut}
	case info.subresource != "": // "status", "scale"
		allowed = []string{http.MethodGet, http.MethodPut, http.MethodPatch}
	case info.name != "":
		allowed = []string{http.MethodGet, http.MethodPut, http.MethodPatch, http.MethodDelete}
	case res.Namespaced && info.namespace == "": // across all namespaces
		allowed = []string{http.MethodGet}
	default:
		allowed = []string{http.MethodGet, http.MethodPost}
		if deleteCollectionAllowed(info, res) {
			allowed = append(allowed, http.MethodDelete)
		}
	}
	method := info.verb
	switch method {
	case verbGet, verbList, verbWatch:
		method = http.MethodGet
	case verbCreate:
		method = http.MethodPost
	case verbUpdate:
		method = http.MethodPut
	case verbPatch:
		method = http.MethodPatch
	case verbDelete, verbDeleteCollection:
		method = http.MethodDelete
	default:
		return nil, allowed
	}
	if !hasString(allowed, method) {
		return nil, allowed
	}
	return restHandlers[info.verb], allowed
}

var restHandlers = map[string]restHandler{
	verbGet:    (*Server).getObject,
	verbList:   (*Server).listObjects,
	verbWatch:  (*Server).watchObjects,
	verbCreate: (*Server).createObject,
	verbUpdate: (*Server).updateObject,
	verbPatch:  (*Server).patchObject,
	verbDelete: (*Server).deleteObject,

	verbDeleteCollection: (*Server).deleteCollection,
}

// serveREST answers a request on a resource path.
func (s *Server) serveREST(w http.ResponseWriter, req *http.Request, info *requestInfo, res *registry.Resource) {
	if res == nil {
		writeError(w, req, s.notServed(req, info))
		return
	}
	req, err := textOnly(req, info, res)
	if err != nil {
		writeError(w, req, err)
		return
	}
	h, allowed := routeVerb(info, res)
	if h == nil {
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		writeError(w, req, methodNotAllowed(info, res))
		return
	}
	if info.subresource == "scale" {
		h = (*Server).serveScale
	}
	if info.verb == verbCreate && res.CreateGate != nil {
		if err := res.CreateGate(); err != nil {
			writeError(w, req, err)
			return
		}
	}
	if err := h(s, w, req, info, res); err != nil {
		writeError(w, req, err)
	}
}

// notFound is upstream's 404 for a path no resource is served at.
func notFound() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotFound,
		Reason:  metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource",
		Details: &metav1.StatusDetails{},
	}}
}

func methodNotAllowed(info *requestInfo, res *registry.Resource) error {
	gr := res.GroupVersionResource().GroupResource()
	if info.subresource != "" {
		gr.Resource += "/" + info.subresource
	}
	return apierrors.NewMethodNotSupported(gr, info.verb)
}

func (s *Server) getObject(w http.ResponseWriter, req *http.Request, info *requestInfo, res *registry.Resource) error {
	out, err := negotiateOutput(req, targetObject)
	if err != nil {
		return err
	}
	opts, err := getOptions(req)
	if err != nil {
		return err
	}
	endStorage := reqtrace.From(req.Context()).Begin(reqtrace.Storage)
	obj, err := s.store.Get(req.Context(), res, info.namespace, info.name, opts)
	endStorage()
	if err != nil {
		return err
	}
	writeObject(w, req, res, out, http.StatusOK, obj)
	return nil
}

func (s *Server) listObjects(w http.ResponseWriter, req *http.Request, info *requestInfo, res *registry.Resource) error {
	out, err := negotiateOutput(req, targetList)
	if err != nil {
		return err
	}
	opts, _, err := listOptions(req, info)
	if err != nil {
		return err
	}
	endStorage := reqtrace.From(req.Context()).Begin(reqtrace.Storage)
	var list runtime.Object
	var shared *registry.SharedList
	if lister, ok := s.store.(registry.SharedLister); ok && sharedListEncodable(out) {
		shared, list, err = lister.ListShared(req.Context(), res, info.namespace, opts)
	} else {
		list, err = s.store.List(req.Context(), res, info.namespace, opts)
	}
	endStorage()
	if err != nil {
		return err
	}
	if shared != nil {
		writeSharedList(w, req, res, out, shared)
		return nil
	}
	writeObject(w, req, res, out, http.StatusOK, list)
	return nil
}

// createObject stores the body as a new object. The namespace comes from
// the URL when the body has none. Its managedFields record the request's
// manager as the owner of every field it set (fieldmanager.go).
func (s *Server) createObject(w http.ResponseWriter, req *http.Request, info *requestInfo, res *registry.Resource) error {
	out, err := negotiateOutput(req, targetObject)
	if err != nil {
		return err
	}
	opts, err := createOptions(req)
	if err != nil {
		return err
	}
	in, err := s.readObject(req, info, res, opts.FieldValidation, opts.FieldManager)
	if err != nil {
		return err
	}
	obj := in.fm.UpdateNoErrors(emptyObject(res), in.obj, in.manager)
	dryRun := len(opts.DryRun) > 0
	if err := s.admission.Admit(req.Context(), s.metrics.admission, newAdmission(admission.Create, info, res, obj, nil, dryRun)); err != nil {
		return err
	}
	endStorage := reqtrace.From(req.Context()).Begin(reqtrace.Storage)
	var created runtime.Object
	err = retryWithoutManagedFields(true, func(dropManagedFields bool) (err error) {
		if dropManagedFields {
			trim.DropManagedFields(obj)
		}
		created, err = s.store.Create(req.Context(), res, info.namespace, obj, registry.WriteOptions{DryRun: dryRun})
		return err
	})
	endStorage()
	if err != nil {
		return err
	}
	addWarnings(w, in.warnings)
	writeObject(w, req, res, out, http.StatusCreated, created)
	return nil
}

// updateObject replaces an object (or its status) with the body. The
// store does the compare-and-swap: strict when the body carries a
// resourceVersion, retried on the latest object when it does not. Each
// attempt records the request's manager in managedFields against the
// object it replaces.
func (s *Server) updateObject(w http.ResponseWriter, req *http.Request, info *requestInfo, res *registry.Resource) error {
	out, err := negotiateOutput(req, targetObject)
	if err != nil {
		return err
	}
	opts, err := updateOptions(req)
	if err != nil {
		return err
	}
	in, err := s.readObject(req, info, res, opts.FieldValidation, opts.FieldManager)
	if err != nil {
		return err
	}
	updateOpts := registry.UpdateOptions{DryRun: len(opts.DryRun) > 0, Subresource: info.subresource}
	tryUpdate := s.admitted(req.Context(), info, res, updateOpts.DryRun, func(current runtime.Object) (runtime.Object, error) {
		live := current
		if live == nil { // a PUT that creates
			live = emptyObject(res)
		}
		return in.fm.UpdateNoErrors(live, in.obj.DeepCopyObject(), in.manager), nil
	})
	updated, code, err := s.update(req.Context(), info, res, updateOpts, tryUpdate, true)
	if err != nil {
		return err
	}
	addWarnings(w, in.warnings)
	writeObject(w, req, res, out, code, updated)
	return nil
}

// requestObject is the object a create or an update (PUT) brings, read
// and checked against the URL before storage is touched, and the field
// manager that records the write in its managedFields.
type requestObject struct {
	obj      runtime.Object
	warnings []string // fieldValidation=Warn's: one per unknown or duplicate field
	fm       *managedfields.FieldManager
	manager  string // the manager fm records the write under
}

// readObject reads the body of a create or an update, in this order,
// answering the first failure: the body (413 when too large), decoded as
// fieldValidation asks (400, 415), in the URL's namespace and, for an
// update, under the URL's name (400); then the field manager of the
// write, recording it under fieldManager or else the User-Agent's product.
func (s *Server) readObject(req *http.Request, info *requestInfo, res *registry.Resource, fieldValidation, fieldManager string) (requestObject, error) {
	body, err := readBody(req, s.cfg.MaxRequestBodyBytes)
	if err != nil {
		return requestObject{}, err
	}
	obj, warnings, err := decodeObject(req, body, res, fieldValidation)
	if err != nil {
		return requestObject{}, err
	}
	if err := ensureNamespace(obj, info.namespace, res); err != nil {
		return requestObject{}, err
	}
	if info.verb == verbUpdate {
		if err := checkName(obj, info.name); err != nil {
			return requestObject{}, err
		}
	}
	fm, err := fieldManagerFor(res, info.subresource)
	if err != nil {
		return requestObject{}, err
	}
	return requestObject{obj: obj, warnings: warnings, fm: fm, manager: managerName(fieldManager, req.UserAgent())}, nil
}

// update runs tryUpdate, an update's or a patch's, in the store's
// compare-and-swap loop and returns what was written with its status
// code: 200, or 201 when the write created the object. A write the store
// refuses as too large is tried once more without managedFields if
// mayDropManagedFields (retryWithoutManagedFields).
func (s *Server) update(ctx context.Context, info *requestInfo, res *registry.Resource, opts registry.UpdateOptions, tryUpdate registry.UpdateFunc, mayDropManagedFields bool) (runtime.Object, int, error) {
	endStorage := reqtrace.From(ctx).Begin(reqtrace.Storage)
	defer endStorage()
	var updated runtime.Object
	var created bool
	err := retryWithoutManagedFields(mayDropManagedFields, func(dropManagedFields bool) (err error) {
		write := tryUpdate
		if dropManagedFields {
			write = withoutManagedFields(tryUpdate)
		}
		updated, created, err = s.store.Update(ctx, res, info.namespace, info.name, opts, write)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	if created {
		return updated, http.StatusCreated, nil
	}
	return updated, http.StatusOK, nil
}

// admitted wraps an update's tryUpdate with admission: each attempt of the
// store's compare-and-swap loop admits the object it is about to write
// against the one it replaces, as an UPDATE, or as a CREATE when there is
// none (a PUT that creates).
func (s *Server) admitted(ctx context.Context, info *requestInfo, res *registry.Resource, dryRun bool, tryUpdate registry.UpdateFunc) registry.UpdateFunc {
	return func(current runtime.Object) (runtime.Object, error) {
		obj, err := tryUpdate(current)
		if err != nil {
			return nil, err
		}
		op := admission.Update
		if current == nil {
			op = admission.Create
		}
		if err := s.admission.Admit(ctx, s.metrics.admission, newAdmission(op, info, res, obj, current, dryRun)); err != nil {
			return nil, err
		}
		return obj, nil
	}
}

// deleteObject removes an object and answers with its last state, as
// upstream does for resources with graceful deletion. A namespace's first
// DELETE answers with the namespace marked Terminating.
func (s *Server) deleteObject(w http.ResponseWriter, req *http.Request, info *requestInfo, res *registry.Resource) error {
	out, err := negotiateOutput(req, targetObject)
	if err != nil {
		return err
	}
	opts, err := s.admitDelete(req, info, res)
	if err != nil {
		return err
	}
	endStorage := reqtrace.From(req.Context()).Begin(reqtrace.Storage)
	deleted, err := s.store.Delete(req.Context(), res, info.namespace, info.name, opts)
	endStorage()
	if err != nil {
		return err
	}
	if deleted == nil {
		return apierrors.NewInternalError(fmt.Errorf("the store returned no object for the deletion of %s %q", res.Kind, info.name))
	}
	writeObject(w, req, res, out, http.StatusOK, deleted)
	return nil
}

// admitDelete reads a DELETE's options (from its body, else its query) and
// passes the deletion through admission, which sees no object.
func (s *Server) admitDelete(req *http.Request, info *requestInfo, res *registry.Resource) (registry.DeleteOptions, error) {
	body, err := readBody(req, s.cfg.MaxRequestBodyBytes)
	if err != nil {
		return registry.DeleteOptions{}, err
	}
	opts, err := deleteOptions(req, body)
	if err != nil {
		return registry.DeleteOptions{}, err
	}
	if err := s.admission.Admit(req.Context(), s.metrics.admission, newAdmission(admission.Delete, info, res, nil, nil, opts.DryRun)); err != nil {
		return registry.DeleteOptions{}, err
	}
	return opts, nil
}

// newAdmission describes a request on obj (and old, the stored object, for
// updates) to the admission chain, with the names its URL gives.
func newAdmission(op admission.Operation, info *requestInfo, res *registry.Resource, obj, old runtime.Object, dryRun bool) *admission.Attributes {
	return admission.NewAttributes(op, res, info.subresource, info.namespace, info.name, obj, old, dryRun)
}
