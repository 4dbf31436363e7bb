package apiserver

import (
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"minicp/registry"
)

// What a client gets for a resource path minicp does not serve. Upstream
// answers every such path with the same bare 404 ("the server could not
// find the requested resource"); minicp serves a subset of upstream's
// resources, so its 404 names what was asked for and where to look
// (`kubectl api-resources` lists what is served). The subresources that
// need a running container (a pod's log, exec, attach, portforward) get
// a Status saying that minicp runs none.

// notServed explains why no handler serves info's path.
func (s *Server) notServed(req *http.Request, info *requestInfo) error {
	if info.resource == "" || info.extraParts {
		return notFoundBecause(fmt.Sprintf("the path %s names no resource minicp serves", req.URL.Path))
	}
	gvr := info.gv.WithResource(info.resource)
	res, ok := s.resources.Lookup(gvr)
	switch {
	case !ok:
		return notFoundBecause(fmt.Sprintf("minicp does not serve the resource %q in %s", info.resource, groupVersionName(info)))
	case info.subresource != "" && res.NeedsContainer(info.subresource):
		return s.noContainers(req, info, res)
	case info.subresource != "" && !res.HasSubresource(info.subresource):
		return notFoundBecause(fmt.Sprintf("minicp does not serve the subresource %q of %s", info.subresource, res.GroupResource()))
	case res.Namespaced:
		return notFoundBecause(fmt.Sprintf("%s are namespaced: name them under /namespaces/<namespace>/%s", res.GroupResource(), res.Name))
	default:
		return notFoundBecause(fmt.Sprintf("%s are cluster-scoped: name them without a namespace", res.GroupResource()))
	}
}

// groupVersionName is "v1" or "apps/v1" as a path names it.
func groupVersionName(info *requestInfo) string {
	if info.gv.Group == "" {
		return "the core group version " + info.gv.Version
	}
	return "the group version " + info.gv.String()
}

// notFoundBecause is upstream's 404 for a path no resource is served at,
// with why and what to do next.
func notFoundBecause(why string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotFound,
		Reason:  metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource: " + why + "; `kubectl api-resources` lists what minicp serves",
		Details: &metav1.StatusDetails{},
	}}
}

// containerActions says what each container subresource would have done.
var containerActions = map[string]string{
	"log":         "no logs to read",
	"exec":        "nothing to exec in",
	"attach":      "nothing to attach to",
	"portforward": "no ports to forward",
}

// noContainers answers a container subresource (kubectl logs, exec,
// attach, port-forward). The object must exist, as upstream checks first
// (404 otherwise). Then the answer is 400 BadRequest, the code upstream
// gives for a pod whose containers cannot be reached (not scheduled, not
// started): kubectl prints it as "Error from server (BadRequest): ..." for
// logs, and as "unable to upgrade connection: ..." for the streaming
// commands, which ask for a connection upgrade first.
func (s *Server) noContainers(req *http.Request, info *requestInfo, res *registry.Resource) error {
	if _, err := s.store.Get(req.Context(), res, info.namespace, info.name, registry.GetOptions{ResourceVersion: "0"}); err != nil {
		return err
	}
	action := containerActions[info.subresource]
	if action == "" {
		action = "no container to reach"
	}
	singular := strings.ToLower(res.Kind)
	return apierrors.NewBadRequest(fmt.Sprintf(
		"%s %q has %s: minicp stores %s but runs no containers (it has no scheduler and no kubelet), so %s/%s is not served",
		singular, info.name, action, res.Name, res.Name, info.subresource))
}
