package apiserver

import (
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkWriteHandlers is what the write handlers cost on their own,
// without HTTP or etcd: a server over the fake store, each request
// handed to its Handler with a recorder. One op is one request through
// everything the apiserver does for it (filters, negotiation, decoding,
// the field manager, admission, the store's compare-and-swap, encoding):
// a ConfigMap created, replaced (PUT), merge-patched, and applied with
// fieldValidation=Strict. GOMAXPROCS=1 (-cpu 1) keeps the garbage
// collector's workers from adding the other core's noise to ns/op.
//
//	go test -run XXX -bench BenchmarkWriteHandlers -benchmem -cpu 1 ./apiserver/
func BenchmarkWriteHandlers(b *testing.B) {
	store := newFakeStore()
	cfg := testConfig(store, io.Discard)
	cfg.Logger = slog.New(slog.DiscardHandler)
	s, err := New(cfg, testResources, store, nil)
	if err != nil {
		b.Fatal(err)
	}
	serve := func(b *testing.B, method, path, contentType, body string) {
		req := httptest.NewRequest(method, "http://127.0.0.1"+path, strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, req)
		if w.Code >= 300 {
			b.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
		}
	}
	// The object the other cases write, created first: the first write
	// also waits for the type converter (fieldmanager.go), which is no
	// create's cost.
	serve(b, "POST", configMapsPath, "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"u"},"data":{"a":"1"}}`)
	b.Run("create", func(b *testing.B) {
		i := 0
		for b.Loop() {
			serve(b, "POST", configMapsPath+"?fieldManager=bench", "application/json",
				fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c%d","labels":{"app":"web"}},"data":{"a":"1","b":"2"}}`, i))
			i++
		}
	})
	b.Run("update", func(b *testing.B) {
		i := 0
		for b.Loop() {
			serve(b, "PUT", configMapsPath+"/u?fieldManager=bench", "application/json",
				fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"u"},"data":{"a":"%d"}}`, i%7))
			i++
		}
	})
	b.Run("patch", func(b *testing.B) {
		i := 0
		for b.Loop() {
			serve(b, "PATCH", configMapsPath+"/u?fieldManager=patcher", "application/merge-patch+json", fmt.Sprintf(`{"data":{"b":"%d"}}`, i%7))
			i++
		}
	})
	b.Run("apply-strict", func(b *testing.B) {
		i := 0
		for b.Loop() {
			serve(b, "PATCH", configMapsPath+"/u?fieldManager=applier&fieldValidation=Strict", "application/apply-patch+yaml",
				fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: u\ndata:\n  c: \"%d\"\n", i%7))
			i++
		}
	})
}
