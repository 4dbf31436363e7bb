package apiserver

// Who am I, and may I? Two resources are answered from the request alone,
// never stored, as upstream answers them:
//
//   - authentication.k8s.io/v1 SelfSubjectReview (kubectl auth whoami):
//     the user the request was authenticated as;
//   - authorization.k8s.io/v1 SelfSubjectAccessReview (kubectl auth can-i):
//     whether that user may do something. minicp has no authorization:
//     every authenticated user may do everything, and the answer's reason
//     says so.
//
// Both are create-only and listed in discovery (addReviewDiscovery), so
// kubectl finds them.

import (
	"bytes"
	"fmt"
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"minicp/apiserver/discovery"
	"minicp/apiserver/filters"
)

// allowReason is the reason of every SelfSubjectAccessReview answer.
const allowReason = "minicp has no authorization: every authenticated user may do every request"

// reviewScheme knows the two review kinds; they are not stored, so they
// are not in the registry's scheme.
var (
	reviewScheme = runtime.NewScheme()
	reviewCodecs = serializer.NewCodecFactory(reviewScheme)
)

func init() {
	utilruntime.Must(authenticationv1.AddToScheme(reviewScheme))
	utilruntime.Must(authorizationv1.AddToScheme(reviewScheme))
}

// review is one of the two review resources.
type review struct {
	gvr          schema.GroupVersionResource
	kind         string
	singularName string
	// answer fills in the status of a decoded review for user u.
	answer func(obj runtime.Object, u *filters.UserInfo) error
}

var reviews = []review{
	{
		gvr:  authenticationv1.SchemeGroupVersion.WithResource("selfsubjectreviews"),
		kind: "SelfSubjectReview", singularName: "selfsubjectreview",
		answer: func(obj runtime.Object, u *filters.UserInfo) error {
			r, ok := obj.(*authenticationv1.SelfSubjectReview)
			if !ok {
				return apierrors.NewBadRequest(fmt.Sprintf("the body must be a SelfSubjectReview, not %T", obj))
			}
			r.Status.UserInfo = authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
			return nil
		},
	},
	{
		gvr:  authorizationv1.SchemeGroupVersion.WithResource("selfsubjectaccessreviews"),
		kind: "SelfSubjectAccessReview", singularName: "selfsubjectaccessreview",
		answer: func(obj runtime.Object, u *filters.UserInfo) error {
			r, ok := obj.(*authorizationv1.SelfSubjectAccessReview)
			if !ok {
				return apierrors.NewBadRequest(fmt.Sprintf("the body must be a SelfSubjectAccessReview, not %T", obj))
			}
			if (r.Spec.ResourceAttributes == nil) == (r.Spec.NonResourceAttributes == nil) {
				return apierrors.NewInvalid(schema.GroupKind{Group: authorizationv1.GroupName, Kind: "SelfSubjectAccessReview"}, "",
					field.ErrorList{field.Required(field.NewPath("spec", "resourceAttributes"),
						"exactly one of resourceAttributes and nonResourceAttributes must be set")})
			}
			r.Status = authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: allowReason}
			return nil
		},
	},
}

// reviewFor returns the review served at a resource request's path.
func reviewFor(info *requestInfo) (*review, bool) {
	if !info.isResource || info.namespace != "" || info.name != "" || info.subresource != "" {
		return nil, false
	}
	for i := range reviews {
		r := &reviews[i]
		if r.gvr == info.gv.WithResource(info.resource) {
			return r, true
		}
	}
	return nil, false
}

// serveReview answers a POST of a review with its status filled in.
func (s *Server) serveReview(w http.ResponseWriter, req *http.Request, r *review) {
	if req.Method != http.MethodPost {
		writeError(w, req, apierrors.NewMethodNotSupported(r.gvr.GroupResource(), req.Method))
		return
	}
	body, err := readBody(req, s.cfg.MaxRequestBodyBytes)
	if err != nil {
		writeError(w, req, err)
		return
	}
	in, err := negotiateInput(req)
	if err != nil {
		writeError(w, req, err)
		return
	}
	info, ok := runtime.SerializerInfoForMediaType(reviewCodecs.SupportedMediaTypes(), in.MediaType)
	if !ok {
		writeError(w, req, unsupportedMediaType(supportedMediaTypes()))
		return
	}
	gvk := r.gvr.GroupVersion().WithKind(r.kind)
	obj, _, err := reviewCodecs.DecoderToVersion(info.Serializer, r.gvr.GroupVersion()).Decode(body, &gvk, nil)
	if err != nil {
		writeError(w, req, apierrors.NewBadRequest(fmt.Sprintf("the body is not a %s: %v", r.kind, err)))
		return
	}
	if err := r.answer(obj, filters.UserFrom(req.Context())); err != nil {
		writeError(w, req, err)
		return
	}
	out, err := negotiateOutput(req, targetObject)
	if err != nil {
		writeError(w, req, err)
		return
	}
	encoder, ok := runtime.SerializerInfoForMediaType(reviewCodecs.SupportedMediaTypes(), out.info.MediaType)
	if !ok {
		encoder = info
	}
	var buf bytes.Buffer
	if err := reviewCodecs.EncoderForVersion(encoder.Serializer, r.gvr.GroupVersion()).Encode(obj, &buf); err != nil {
		writeError(w, req, apierrors.NewInternalError(fmt.Errorf("encoding the %s: %w", r.kind, err)))
		return
	}
	writeRaw(w, encoder.MediaType, http.StatusCreated, buf.Bytes())
}

// reviewDiscovery lists the review resources in discovery beside the
// stored ones: kubectl auth whoami and can-i look for them there.
func reviewDiscovery() []discovery.CreateOnly {
	var out []discovery.CreateOnly
	for _, r := range reviews {
		out = append(out, discovery.CreateOnly{Resource: r.gvr, Kind: r.kind, SingularName: r.singularName})
	}
	return out
}
