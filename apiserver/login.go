package apiserver

// The live page's login. A browser cannot be given a bearer token, so the
// control plane prints a URL carrying a one-time login token:
//
//	http://127.0.0.1:8080/ui/login?token=<one-time token>
//
// Visiting it trades the token for a session cookie (HttpOnly, so the
// page's scripts cannot read it; SameSite=Strict, so no other site's page
// makes the browser send it) and redirects to /ui/. The cookie then
// authenticates the page's reads (GET and HEAD only): /ui/ itself and the
// JSON views under /debug/. Writes always need the bearer token.

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"minicp/apiserver/filters"
)

const (
	loginPath = "/ui/login"
	// SessionCookie is the name of the live page's session cookie.
	SessionCookie = "minicp-session"
	// uiHome is where a successful login lands.
	uiHome = "/ui/"
)

// loginManager keeps the one-time login tokens not yet used and the
// sessions they were traded for; both live as long as the server.
type loginManager struct {
	secure bool // the server speaks TLS: the cookie is Secure

	// mu guards pending and sessions.
	mu       sync.Mutex
	pending  map[string]*filters.UserInfo // one-time login token -> user
	sessions map[string]*filters.UserInfo // session cookie value -> user
}

func newLoginManager(secure bool) *loginManager {
	return &loginManager{secure: secure, pending: map[string]*filters.UserInfo{}, sessions: map[string]*filters.UserInfo{}}
}

// newLoginToken makes a one-time login token for u.
func (l *loginManager) newLoginToken(u filters.UserInfo) string {
	token := randomToken()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending[token] = &u
	return token
}

// NewLoginURL returns a URL that logs a browser into the live page as u,
// once. The control plane prints one at start.
// On loopback it is a plain-HTTP URL, so that the browser shows no warning
// about minicp's own certificate authority.
func (s *Server) NewLoginURL(u filters.UserInfo) string {
	base := s.PlainURL()
	if base == "" {
		base = s.URL()
	}
	return base + loginPath + "?token=" + s.login.newLoginToken(u)
}

// ServeHTTP trades a one-time login token for a session cookie.
func (l *loginManager) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet {
		writeError(w, req, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "login"}, req.Method))
		return
	}
	token := req.URL.Query().Get("token")
	l.mu.Lock()
	u, ok := l.pending[token]
	delete(l.pending, token)
	var session string
	if ok {
		session = randomToken()
		l.sessions[session] = u
	}
	l.mu.Unlock()
	if !ok {
		writeError(w, req, apierrors.NewUnauthorized("this login link is not valid or was used already: "+
			"a login link works once; restart minicp for a new one, or use kubectl proxy and open /ui/ through it"))
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: session, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: l.secure,
	})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, req, uiHome, http.StatusSeeOther)
}

// sessionUser is the user of req's session cookie, nil without a valid
// one. The cookie only authenticates reads.
func (l *loginManager) sessionUser(req *http.Request) *filters.UserInfo {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return nil
	}
	c, err := req.Cookie(SessionCookie)
	if err != nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sessions[c.Value]
}

// randomToken is 32 random bytes, URL-safe: a bearer token, a login token
// or a session.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (it panics instead)
	return base64.RawURLEncoding.EncodeToString(b)
}

// RandomToken returns a new random bearer token, for the control plane's
// first start.
func RandomToken() string { return randomToken() }
