package faults

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// maxBodyBytes bounds a POSTed fault.
const maxBodyBytes = 64 << 10

// List is the body of GET /debug/faults.
type List struct {
	Faults []Fault `json:"faults"`
}

// Cleared is the body of DELETE /debug/faults.
type Cleared struct {
	Cleared int `json:"cleared"`
}

// Handler serves the fault API (see the package doc) to loopback clients
// only; anyone else gets 403 Forbidden.
func (s *Set) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

func (s *Set) serveHTTP(w http.ResponseWriter, req *http.Request) {
	if !fromLoopback(req) {
		writeStatus(w, apierrors.NewForbidden(faultsResource, "", fmt.Errorf("fault injection answers loopback clients only, not %s", req.RemoteAddr)))
		return
	}
	if _, rest, ok := strings.Cut(req.URL.Path, "/members/"); ok {
		s.serveMember(w, req, rest)
		return
	}
	switch req.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, List{Faults: s.List()})
	case http.MethodPost:
		var f Fault
		body, err := io.ReadAll(io.LimitReader(req.Body, maxBodyBytes))
		if err == nil {
			err = json.Unmarshal(body, &f)
		}
		if err == nil {
			err = s.Add(f)
		}
		if err != nil {
			writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("not a fault: %v; send e.g. {\"point\":\"etcd.range\",\"delay\":\"2s\"}", err)))
			return
		}
		writeJSON(w, http.StatusCreated, f)
	case http.MethodDelete:
		writeJSON(w, http.StatusOK, Cleared{Cleared: s.Clear(Point(req.URL.Query().Get("point")))})
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeStatus(w, apierrors.NewMethodNotSupported(faultsResource, req.Method))
	}
}

// faultsResource names the API in its error messages.
var faultsResource = schema.GroupResource{Resource: "debug/faults"}

// fromLoopback reports whether req came from this machine.
func fromLoopback(req *http.Request) bool {
	host, _, err := net.SplitHostPort(req.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		writeStatus(w, apierrors.NewInternalError(err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(body, '\n')) // a failed write means the client left
}

// writeStatus answers with the Status an API error carries.
func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	status := err.Status()
	status.Kind, status.APIVersion = "Status", "v1"
	writeJSON(w, int(status.Code), status)
}
