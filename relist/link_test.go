package relist

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func get(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	// A fresh transport per request: pooled connections would hide the cut.
	resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestLinkHoldsRequestsWhileCutAndRelaysThemOnRestore(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }))
	defer srv.Close()
	link, err := NewLink(strings.TrimPrefix(srv.URL, "http://"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	if body, err := get(ctx, link.URL()); err != nil || body != "hello" {
		t.Fatalf("through the link: %q, %v", body, err)
	}
	link.Cut()
	type result struct {
		body string
		err  error
	}
	done := make(chan result, 1) // written once by the request goroutine
	go func() {
		body, err := get(ctx, link.URL())
		done <- result{body, err}
	}()
	if err := waitFor(ctx, func() bool { return link.Held() == 1 }); err != nil {
		t.Fatalf("the request was not held: %v", err)
	}
	select {
	case r := <-done:
		t.Fatalf("a request went through a cut link: %+v", r)
	default:
	}
	link.Restore()
	if r := <-done; r.err != nil || r.body != "hello" {
		t.Fatalf("the held request after Restore: %q, %v", r.body, r.err)
	}
	if link.Held() != 0 {
		t.Errorf("%d connections still held after Restore", link.Held())
	}
}

func TestLinkCutEndsOpenStreams(t *testing.T) {
	started := make(chan struct{}) // closed by the handler once streaming
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done() // stream until the client is gone
	}))
	defer srv.Close()
	link, err := NewLink(strings.TrimPrefix(srv.URL, "http://"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1) // written once by the request goroutine
	go func() {
		_, err := get(ctx, link.URL())
		done <- err
	}()
	<-started
	link.Cut()
	select {
	case err := <-done:
		if err == nil {
			t.Error("the cut stream ended without an error")
		}
	case <-ctx.Done():
		t.Fatal("Cut did not end the open stream")
	}
}
