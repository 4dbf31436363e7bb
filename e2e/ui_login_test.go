package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"minicp/apiserver"
	"minicp/controlplane"
	"minicp/e2e/framework"
)

// newLoginLink asks the running minicp for a new login link with the
// stack's bearer token, as minictl ui does.
func newLoginLink(t *testing.T, s *framework.Stack) string {
	t.Helper()
	resp, err := s.HTTP.Post(s.URL+"/ui/login", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var link apiserver.LoginLink
	if err := json.NewDecoder(resp.Body).Decode(&link); err != nil || resp.StatusCode != http.StatusOK || link.URL == "" {
		t.Fatalf("POST /ui/login with the token: got %d %+v (%v), want 200 and a link", resp.StatusCode, link, err)
	}
	return link.URL
}

// openInBrowser navigates p to url and waits until the new document has
// loaded; it returns the document's URL and text.
func openInBrowser(t *testing.T, p *browserPage, url string) (string, string) {
	t.Helper()
	p.eval(`window.minicpOldDocument = true`, nil)
	p.call("Page.navigate", map[string]any{"url": url}, nil)
	var doc struct{ URL, Text string }
	framework.Eventually(t, 20*time.Second, "the browser to load "+url, func() bool {
		p.eval(`!window.minicpOldDocument && document.readyState === 'complete' ? {url: location.href, text: document.body ? document.body.innerText : ''} : {}`, &doc)
		return doc.URL != ""
	})
	return doc.URL, doc.Text
}

// A login that forgives: a link asked for while minicp runs (minictl ui)
// logs a browser in; that link opened again in the same browser leads
// back to the page instead of an error; a browser without a session that
// opens it reads a page saying to run minictl ui, and the next new link
// logs it in, all without restarting minicp. A page open when its
// session ends says how to log in again.
func TestLivePageLoginForgivesAUsedLinkAndGivesNewOnesWithoutARestart(t *testing.T) {
	s := framework.Start(t, framework.Options{Configure: func(c *controlplane.Config) { c.Nodes.Simulated = 0 }})
	link := newLoginLink(t, s)
	home := strings.SplitN(link, "/ui/", 2)[0] + "/ui/"
	page := startChromium(t, "about:blank")

	if at, _ := openInBrowser(t, page, link); at != home {
		t.Fatalf("the new link led to %s, want %s", at, home)
	}
	waitDrawn(t, page, 1)

	if at, text := openInBrowser(t, page, link); at != home || strings.Contains(text, "not valid") {
		t.Errorf("the used link in the logged-in browser: at %s showing %.200q; want the page at %s", at, text, home)
	}
	waitDrawn(t, page, 1)

	page.call("Network.clearBrowserCookies", nil, nil)
	_, text := openInBrowser(t, page, link)
	if !strings.Contains(text, "minictl ui") || !strings.Contains(text, "used already") || strings.Contains(text, `"kind"`) {
		t.Errorf("the used link in a browser without a session shows %q; want a page saying it was used and to run minictl ui", text)
	}

	if at, _ := openInBrowser(t, page, newLoginLink(t, s)); at != home {
		t.Errorf("a second new link led to %s, want %s", at, home)
	}
	waitDrawn(t, page, 1)

	// A page whose session ends says so, and what to do, instead of
	// showing minicp as down.
	page.call("Network.clearBrowserCookies", nil, nil)
	framework.Eventually(t, 20*time.Second, "the page to say the browser is no longer logged in", func() bool {
		var shown bool
		page.eval(`!document.querySelector('#banner').hidden && document.querySelector('#banner').textContent.includes('minictl ui')`, &shown)
		return shown
	})
	if banner := page.text("#banner"); strings.Contains(banner, "not answering") {
		t.Errorf("the banner says %q: minicp answers, the browser is only logged out", banner)
	}
}
