package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfigWithToken writes a kubeconfig for server whose user sends
// token. The server speaks TLS: client-go sends a token over nothing else.
func kubeconfigWithToken(t *testing.T, server, token string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// minictl ui POSTs to /ui/login with the kubeconfig's bearer token and
// prints the link the apiserver answers and the page it opens; a refusal
// is an error carrying the apiserver's message.
func TestUIPrintsTheLinkTheApiserverGivesForTheToken(t *testing.T) {
	const token = "the-token"
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || req.URL.Path != "/ui/login" {
			http.NotFound(w, req)
			return
		}
		if req.Header.Get("Authorization") != "Bearer "+token {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"the bearer token is not valid","reason":"Unauthorized","code":401}`))
			return
		}
		_, _ = w.Write([]byte(`{"url":"http://127.0.0.1:8080/ui/login?token=abc","sessionSeconds":43200}`))
	}))
	defer api.Close()

	var out bytes.Buffer
	if err := run(context.Background(), []string{"ui", "--kubeconfig", kubeconfigWithToken(t, api.URL, token)}, &out); err != nil {
		t.Fatalf("minictl ui: %v", err)
	}
	for _, want := range []string{"live page: http://127.0.0.1:8080/ui/login?token=abc\n", "opens http://127.0.0.1:8080/ui/)", "good for 12 h"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("minictl ui printed:\n%s\nwant it to contain %q", out.String(), want)
		}
	}

	err := run(context.Background(), []string{"ui", "--kubeconfig", kubeconfigWithToken(t, api.URL, "wrong")}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "the bearer token is not valid") {
		t.Errorf("minictl ui with a wrong token: got %v, want the apiserver's message", err)
	}
}
