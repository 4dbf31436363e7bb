package filters

// Authentication: who sent a request? minicp knows its users by bearer
// token, as kube-apiserver's static token authenticator does:
//
//   - the control plane's own token (the apiserver's Config.Tokens), made
//     on first start and written into the kubeconfig, so kubectl and
//     client-go send it;
//   - the users of --token-auth-file, in upstream's CSV format
//     (token,user,uid,"group1,group2");
//   - the live page's session cookie, for the page's own views (the
//     apiserver's login hands the cookies out and looks them up).
//
// A request with no valid credential is 401 Unauthorized, except on the
// paths upstream leaves readable by anyone (PublicInfoPaths). Whether the
// user may do what it asks is authorization's question (Chain.Authorize).

import (
	"crypto/subtle"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"minicp/reqtrace"
)

// PublicInfoPaths are readable without a credential, as upstream's
// system:public-info-viewer role leaves them. /metrics and /debug/* need a
// credential, as upstream.
var PublicInfoPaths = []string{"/healthz", "/livez", "/readyz", "/version"}

// Authenticator decides who sent a request.
type Authenticator struct {
	// Tokens are the known bearer tokens.
	Tokens TokenAuthenticator
	// Session is the user of the request's session cookie, nil without a
	// valid one.
	Session func(*http.Request) *UserInfo
	// Anonymous lets requests without a credential through as
	// system:anonymous.
	Anonymous bool
	// Public are the paths (and everything below them) served without a
	// credential: PublicInfoPaths and the live page's login.
	Public []string
}

func (a *Authenticator) isPublic(path string) bool {
	for _, p := range a.Public {
		if isUnder(path, p) {
			return true
		}
	}
	return false
}

// TokenAuthenticator maps bearer tokens to users. It is built once, when
// the server is made, and only read afterwards.
type TokenAuthenticator map[string]*UserInfo

// NewTokenAuthenticator joins the tokens given in code with those of the
// token file, if any. Every user is also in system:authenticated.
func NewTokenAuthenticator(tokens map[string]UserInfo, file string) (TokenAuthenticator, error) {
	a := TokenAuthenticator{}
	add := func(token string, u UserInfo) {
		if !u.InGroup(GroupAuthenticated) {
			u.Groups = append(append([]string(nil), u.Groups...), GroupAuthenticated)
		}
		a[token] = &u
	}
	for token, u := range tokens {
		add(token, u)
	}
	if file == "" {
		return a, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("--token-auth-file: %w", err)
	}
	defer f.Close()
	fromFile, err := readTokenFile(f)
	if err != nil {
		return nil, fmt.Errorf("--token-auth-file %s: %w", file, err)
	}
	for token, u := range fromFile {
		add(token, u)
	}
	return a, nil
}

// readTokenFile reads upstream's static token file: one user a line,
// token,user,uid and optionally a quoted comma-separated list of groups.
// Lines starting with # are comments; a repeated token is an error.
func readTokenFile(r io.Reader) (map[string]UserInfo, error) {
	reader := csv.NewReader(r)
	reader.FieldsPerRecord = -1
	reader.TrimLeadingSpace = true
	reader.Comment = '#'
	out := map[string]UserInfo{}
	for {
		record, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		line, _ := reader.FieldPos(0)
		if len(record) < 3 {
			return nil, fmt.Errorf("line %d: want token,user,uid[,\"group1,group2\"], got %d fields", line, len(record))
		}
		token, name := strings.TrimSpace(record[0]), strings.TrimSpace(record[1])
		if token == "" || name == "" {
			return nil, fmt.Errorf("line %d: the token and the user name must not be empty", line)
		}
		if _, dup := out[token]; dup {
			return nil, fmt.Errorf("line %d: the token is already given to another user", line)
		}
		u := UserInfo{Name: name, UID: strings.TrimSpace(record[2])}
		if len(record) > 3 {
			for _, g := range strings.Split(record[3], ",") {
				if g = strings.TrimSpace(g); g != "" {
					u.Groups = append(u.Groups, g)
				}
			}
		}
		out[token] = u
	}
}

// lookup finds the user of token, comparing in constant time per token so
// that the time taken does not tell how much of a token was right.
func (a TokenAuthenticator) lookup(token string) *UserInfo {
	var found *UserInfo
	for t, u := range a {
		if subtle.ConstantTimeCompare([]byte(t), []byte(token)) == 1 {
			found = u
		}
	}
	return found
}

// Authenticate decides who sent req and puts the user in its context. It
// returns an error (401) when the request must not go further: a bearer
// token that is not known, or no credential on a path that needs one.
func (a *Authenticator) Authenticate(req *http.Request) (*http.Request, error) {
	defer reqtrace.From(req.Context()).Begin(reqtrace.Authentication)()
	u, err := a.credentialUser(req)
	if err != nil {
		return req, err
	}
	if u == nil {
		if a.Anonymous {
			u = &UserInfo{Name: anonymousUser, Groups: []string{groupUnauthenticated}}
		} else if !a.isPublic(req.URL.Path) {
			return req, errUnauthorized("this request carries no credential")
		}
	}
	return req.WithContext(withUser(req.Context(), u)), nil
}

// credentialUser is the user of the request's bearer token or session
// cookie; nil (and no error) when it has neither.
func (a *Authenticator) credentialUser(req *http.Request) (*UserInfo, error) {
	if header := req.Header.Get("Authorization"); header != "" {
		token, ok := strings.CutPrefix(header, "Bearer ")
		if !ok {
			return nil, errUnauthorized("the Authorization header is not a bearer token")
		}
		u := a.Tokens.lookup(strings.TrimSpace(token))
		if u == nil {
			return nil, errUnauthorized("the bearer token is not valid")
		}
		return u, nil
	}
	if a.Session == nil {
		return nil, nil
	}
	return a.Session(req), nil
}

// errUnauthorized is upstream's 401, with what to do about it.
func errUnauthorized(why string) error {
	return apierrors.NewUnauthorized(why + ": use the kubeconfig minicp wrote in its data directory " +
		"(export KUBECONFIG=<data-dir>/kubeconfig), which carries its bearer token; for raw paths use " +
		"kubectl get --raw <path> or kubectl proxy; for the live page open the login link minicp printed at start, or run minictl ui for a new one")
}
