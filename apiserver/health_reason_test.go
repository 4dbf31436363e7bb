package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// alarmError stands for a readiness error meant to be shown, such as a
// raised etcd alarm.
type alarmError struct{}

func (alarmError) Error() string        { return "etcd alarm NOSPACE on member 1" }
func (alarmError) PublicReason() string { return "etcd alarm NOSPACE on member 1" }

// M17: /readyz names etcd's NOSPACE alarm instead of
// withholding the reason, even when the error is wrapped.
func TestReadyzShowsAPublicReasonInsteadOfWithholdingIt(t *testing.T) {
	srv := httptest.NewServer(newHealthHandler(func(context.Context) error {
		return fmt.Errorf("checking alarms: %w", alarmError{})
	}))
	defer srv.Close()
	want := "[+]ping ok\n[-]etcd failed: etcd alarm NOSPACE on member 1\nreadyz check failed\n"
	if code, body := getHealth(t, srv, "/readyz"); code != http.StatusInternalServerError || body != want {
		t.Errorf("GET /readyz: got %d %q, want 500 %q", code, body, want)
	}
}
