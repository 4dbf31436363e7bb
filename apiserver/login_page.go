package apiserver

// The live page's errors, as a browser shows them. A person who opens a
// used login link, or /ui/ after the session expired, reads a short page
// that says what happened and what to do; raw Status JSON would leave
// them guessing. Only a request under /ui that asks for HTML (a browser
// navigating: Accept: text/html) gets it; the page's own scripts and API
// clients keep getting the Status.

import (
	"fmt"
	"html/template"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// wantsErrorPage reports whether req is a browser opening a page under
// /ui, which should see an error as HTML.
func wantsErrorPage(req *http.Request) bool {
	return isUnder(req.URL.Path, "/ui") && strings.Contains(req.Header.Get("Accept"), "text/html")
}

// errorPage is the HTML a browser gets for a failed request under /ui.
var errorPage = template.Must(template.New("error").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>minicp live page: {{.Code}} {{.Reason}}</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 42em; margin: 3em auto; padding: 0 1em; line-height: 1.5">
<h1 style="font-size: 1.3em">{{.Title}}</h1>
<p>{{.Message}}</p>
{{if .Unauthorized}}<p>For a new one-time login link, run <code>minictl ui</code> (with <code>--data-dir</code> when minicp's data directory is not <code>./minicp-data</code>) and open the link it prints. A link works once; the session it opens lasts {{.Lifetime}} in this browser, across browser restarts, while minicp runs.</p>
<p>Or run <code>kubectl proxy</code> and open <a href="http://127.0.0.1:8001/ui/">http://127.0.0.1:8001/ui/</a>: the proxy adds the kubeconfig's token.</p>{{end}}
<p style="color: #667085; font-size: 0.9em">{{.Code}} {{.Reason}}</p>
</body>
</html>
`))

// writeErrorPage writes status as errorPage, with its code.
func writeErrorPage(w http.ResponseWriter, status *metav1.Status) {
	unauthorized := status.Code == http.StatusUnauthorized
	title := "The live page could not be shown"
	if unauthorized {
		title = "This browser is not logged in to minicp's live page"
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(int(status.Code))
	// A failed write means the client went away.
	_ = errorPage.Execute(w, map[string]any{
		"Code": status.Code, "Reason": status.Reason, "Title": title, "Message": status.Message,
		"Unauthorized": unauthorized, "Lifetime": fmt.Sprintf("%g hours", SessionLifetime.Hours()),
	})
}
