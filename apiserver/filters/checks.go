package filters

// What a web page open in the user's browser could do to a server on
// loopback, and what stops it (the first three filters of the chain):
//
//  1. Host: a page served from evil.example can make its own name resolve
//     to 127.0.0.1 (DNS rebinding) and then read everything as "same
//     origin". The Host header still says evil.example, so only loopback
//     names and addresses, the bind address and the names of the serving
//     certificate are answered; anything else is 400.
//  2. Origin: a browser names the page that sent a request. A write
//     (anything but GET, HEAD and OPTIONS) from a page of another origin
//     is 403.
//  3. Content-Type: a page may send text/plain, form data or a body with
//     no type at all to any server without asking it first; JSON, YAML,
//     protobuf and the patch types need the server's consent (a CORS
//     preflight), which minicp never gives. So every write must carry one
//     of those types, /debug/ endpoints included: 415 otherwise.

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// writeMediaTypes are the Content-Types a write may carry.
var writeMediaTypes = []string{
	"application/json", "application/yaml", "application/vnd.kubernetes.protobuf",
	string(types.JSONPatchType), string(types.MergePatchType), string(types.StrategicMergePatchType),
	string(types.ApplyYAMLPatchType),
}

// HostCheck answers the names of this server and nothing else.
type HostCheck struct {
	// BindAddress is the address the server listens on.
	BindAddress string
	// Allowed are the host names answered besides loopback: the names of
	// the serving certificate, added when the server starts listening and
	// read-only while it serves.
	Allowed map[string]bool
}

// Check refuses a Host header that names another server.
func (c *HostCheck) Check(req *http.Request) error {
	host := req.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "" || host == "localhost" || strings.HasSuffix(host, ".localhost") || c.Allowed[host] {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil {
		bind := net.ParseIP(c.BindAddress)
		if ip.IsLoopback() || ip.Equal(bind) || (bind != nil && bind.IsUnspecified()) {
			return nil
		}
	}
	return apierrors.NewBadRequest(fmt.Sprintf("the Host header %q names neither a loopback address nor this server "+
		"(--bind-address %s): minicp refuses it so that a web page cannot reach it through DNS rebinding; "+
		"connect to 127.0.0.1 or localhost, or to the bind address", req.Host, c.BindAddress))
}

// isWrite reports whether a method may change state.
func isWrite(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// checkOrigin refuses a write sent by a page of another origin.
func checkOrigin(req *http.Request) error {
	origin := req.Header.Get("Origin")
	if origin == "" || !isWrite(req.Method) {
		return nil
	}
	scheme := "http"
	if req.TLS != nil {
		scheme = "https"
	}
	if u, err := url.Parse(origin); err == nil && u.Scheme == scheme && strings.EqualFold(u.Host, req.Host) {
		return nil
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
		Message: fmt.Sprintf("a write sent by the web page %s is refused: only pages of this server (%s://%s) may write; "+
			"use kubectl or client-go", origin, scheme, req.Host),
	}}
}

// checkWriteContentType refuses a write whose body is not JSON, YAML,
// protobuf or a patch. Two writes may go without a Content-Type: a DELETE
// without a body, and a request that carries an Authorization header
// (kubectl create --raw sends none; its body is read as JSON). A page
// cannot add that header to a request to another site without asking the
// server first (a CORS preflight), which minicp never grants.
func checkWriteContentType(req *http.Request) error {
	if !isWrite(req.Method) || (req.Method == http.MethodDelete && req.ContentLength == 0) {
		return nil
	}
	if req.Header.Get("Content-Type") == "" && req.Header.Get("Authorization") != "" {
		return nil
	}
	mediaType, _, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil {
		mediaType = strings.TrimSpace(strings.SplitN(req.Header.Get("Content-Type"), ";", 2)[0])
	}
	for _, t := range writeMediaTypes {
		if mediaType == t {
			return nil
		}
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("a %s must carry one of these Content-Types: %s (got %q); "+
			"a web page can send other types to any server unasked, so minicp refuses them",
			req.Method, strings.Join(writeMediaTypes, ", "), req.Header.Get("Content-Type")),
	}}
}
