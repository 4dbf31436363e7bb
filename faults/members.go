package faults

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Members is an etcd cluster whose members can be stopped as a crash would
// stop them and started again (embedetcd.Cluster): the read-consistency
// lab (M3) takes quorum away with it.
type Members interface {
	StopMember(name string) error
	RestartMember(ctx context.Context, name string) error
}

// SetMembers lets the HTTP API stop and restart members of m:
//
//	POST /debug/faults/members/NAME/stop
//	POST /debug/faults/members/NAME/restart
//
// Call it before the API serves requests.
func (s *Set) SetMembers(m Members) { s.members = m }

// MemberAction is the body answering a member request.
type MemberAction struct {
	Member string `json:"member"`
	Action string `json:"action"`
}

// serveMember handles /debug/faults/members/NAME/ACTION.
func (s *Set) serveMember(w http.ResponseWriter, req *http.Request, rest string) {
	name, action, ok := strings.Cut(rest, "/")
	if !ok || name == "" || (action != "stop" && action != "restart") {
		writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("want POST /debug/faults/members/NAME/stop or /restart, not %s", req.URL.Path)))
		return
	}
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeStatus(w, apierrors.NewMethodNotSupported(faultsResource, req.Method))
		return
	}
	if s.members == nil {
		writeStatus(w, apierrors.NewBadRequest("this minicp has no embedded etcd whose members could be stopped"))
		return
	}
	var err error
	if action == "stop" {
		err = s.members.StopMember(name)
	} else {
		err = s.members.RestartMember(req.Context(), name)
	}
	if err != nil {
		writeStatus(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, MemberAction{Member: name, Action: action})
}
