package apiserver

// The live page's login. A browser cannot be given a bearer token, so the
// control plane prints a URL carrying a one-time login token:
//
//	http://127.0.0.1:8080/ui/login?token=<one-time token>
//
// Visiting it trades the token for a session cookie (HttpOnly, so the
// page's scripts cannot read it; SameSite=Strict, so no other site's page
// makes the browser send it; Max-Age, so it outlives a browser restart
// until the session expires) and redirects to /ui/. The cookie then
// authenticates the page's reads (GET and HEAD only): /ui/ itself and the
// JSON views under /debug/. Writes always need the bearer token.
//
// A new link is a POST to the same path with the bearer token (minictl ui
// sends it): a cookie never authenticates a POST, so a web page the
// browser shows cannot mint links. A link already used, opened again by a
// browser that still has a valid session, leads to the page as if it
// were new; without a session the browser gets a short HTML page saying
// how to get a new link (login_page.go), an API client a Status.

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"minicp/apiserver/filters"
)

const (
	loginPath = "/ui/login"
	// SessionCookie is the name of the live page's session cookie.
	SessionCookie = "minicp-session"
	// uiHome is where a successful login lands.
	uiHome = "/ui/"
	// SessionLifetime is how long a session lasts from its login: a
	// working day, so that a learner's browser, closed and reopened, is
	// still logged in, and a cookie left behind stops working.
	SessionLifetime = 12 * time.Hour
)

// loginManager keeps the one-time login tokens not yet used and the
// sessions they were traded for; both live at most as long as the server.
type loginManager struct {
	secure bool // the server speaks TLS: the cookie is Secure
	clock  clock.PassiveClock

	// mu guards pending and sessions.
	mu       sync.Mutex
	pending  map[string]*filters.UserInfo // one-time login token -> user
	sessions map[string]session           // session cookie value -> its user
}

// session is who a session cookie logs in, until when.
type session struct {
	user    *filters.UserInfo
	expires time.Time
}

func newLoginManager(secure bool) *loginManager {
	return &loginManager{secure: secure, clock: clock.RealClock{}, pending: map[string]*filters.UserInfo{}, sessions: map[string]session{}}
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

// serveLogin serves the login path: GET trades a one-time login token
// for a session, POST makes a new login link.
func (s *Server) serveLogin(w http.ResponseWriter, req *http.Request) {
	switch req.Method {
	case http.MethodGet:
		s.login.redeem(w, req)
	case http.MethodPost:
		s.newLoginLink(w, req)
	default:
		writeError(w, req, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "login"}, req.Method))
	}
}

// LoginLink is the answer to a POST to the login path.
type LoginLink struct {
	// URL logs one browser into the live page, once.
	URL string `json:"url"`
	// SessionSeconds is how long the session it opens lasts.
	SessionSeconds int64 `json:"sessionSeconds"`
}

// newLoginLink answers a client that showed a bearer token with a new
// login link for its user. The login path is public (a browser follows a
// link without a credential), so the token is checked here: authenticate
// has already refused a token that is not valid, and a session cookie
// never authenticates a POST.
func (s *Server) newLoginLink(w http.ResponseWriter, req *http.Request) {
	u := filters.UserFrom(req.Context())
	if u == nil || req.Header.Get("Authorization") == "" {
		writeError(w, req, apierrors.NewUnauthorized("a new login link is given for a bearer token only: "+
			"run minictl ui, which sends the token of minicp's kubeconfig"))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	link := LoginLink{URL: s.NewLoginURL(*u), SessionSeconds: int64(SessionLifetime / time.Second)}
	// A failed write means the client went away.
	_ = json.NewEncoder(w).Encode(link)
}

// redeem trades a one-time login token for a session cookie and leads to
// the page. A token that is not valid leads there too when the browser
// is logged in already (a used link reopened from the history).
func (l *loginManager) redeem(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	token := req.URL.Query().Get("token")
	now := l.clock.Now()
	l.mu.Lock()
	u, ok := l.pending[token]
	delete(l.pending, token)
	var value string
	if ok {
		l.dropExpiredLocked(now)
		value = randomToken()
		l.sessions[value] = session{user: u, expires: now.Add(SessionLifetime)}
	}
	l.mu.Unlock()
	if !ok {
		if l.sessionUser(req) != nil {
			http.Redirect(w, req, uiHome, http.StatusSeeOther)
			return
		}
		writeError(w, req, apierrors.NewUnauthorized("this login link is not valid or was used already: "+
			"a login link works once; run minictl ui for a new one, or use kubectl proxy and open /ui/ through it"))
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: value, Path: "/",
		MaxAge: int(SessionLifetime / time.Second), Expires: now.Add(SessionLifetime),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: l.secure,
	})
	http.Redirect(w, req, uiHome, http.StatusSeeOther)
}

// dropExpiredLocked forgets the sessions past their expiry, so that the
// map holds only live ones. l.mu must be held.
func (l *loginManager) dropExpiredLocked(now time.Time) {
	for value, s := range l.sessions {
		if !now.Before(s.expires) {
			delete(l.sessions, value)
		}
	}
}

// sessionUser is the user of req's session cookie, nil without a valid
// one (unknown or expired). The cookie only authenticates reads.
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
	s, ok := l.sessions[c.Value]
	if !ok || !l.clock.Now().Before(s.expires) {
		return nil
	}
	return s.user
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
