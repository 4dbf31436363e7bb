// Package document serves the apiserver's precomputed documents
// (discovery and OpenAPI): a body computed once per state of the resource
// table, with its entity tag, answered with 304 when the client already
// has it. The document endpoints speak JSON only, their errors included.
package document

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Document is one precomputed response body with its entity tag (a
// document changes only when the resource table does).
type Document struct {
	Body []byte
	ETag string
}

// Serve writes doc with an ETag and answers If-None-Match with 304.
func Serve(w http.ResponseWriter, r *http.Request, contentType string, doc Document) {
	w.Header().Set("ETag", doc.ETag)
	if match := r.Header.Get("If-None-Match"); match != "" && match == doc.ETag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(doc.Body) // the client went away; nothing to do
}

// Errors of the document endpoints, with upstream's codes and messages.
var (
	ErrNotFound = Status(http.StatusNotFound, metav1.StatusReasonNotFound,
		"the server could not find the requested resource")
	ErrMethodNotAllowed = Status(http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed,
		"the server does not allow this method on the requested resource")
)

// Status is a failure Status with code, reason and message.
func Status(code int32, reason metav1.StatusReason, message string) metav1.Status {
	return metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: code, Reason: reason, Message: message,
	}
}

// WriteStatus writes status as JSON, the only encoding the document
// endpoints speak.
func WriteStatus(w http.ResponseWriter, status metav1.Status) {
	body, err := json.Marshal(status)
	if err != nil {
		http.Error(w, status.Message, int(status.Code))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(status.Code))
	_, _ = w.Write(body) // the client went away; nothing to do
}

// MustJSON encodes v, which is always one of the API's document structs:
// a failure is a programming error. The entity tag is a hash of the body.
func MustJSON(v any) Document {
	body, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("encoding document %T: %v", v, err))
	}
	sum := sha256.Sum256(body)
	return Document{Body: body, ETag: fmt.Sprintf("%q", fmt.Sprintf("%X", sum[:16]))}
}
