package apiserver

// Authentication: who sent a request? minicp knows its users by bearer
// token, as kube-apiserver's static token authenticator does:
//
//   - the control plane's own token (Config.Tokens), made on first start
//     and written into the kubeconfig, so kubectl and client-go send it;
//   - the users of --token-auth-file, in upstream's CSV format
//     (token,user,uid,"group1,group2");
//   - the live page's session cookie (login.go), for the page's own views.
//
// A request with no valid credential is 401 Unauthorized, except on the
// paths upstream leaves readable by anyone (publicPaths). There is no
// authorization beyond that: every authenticated user may do everything,
// and SelfSubjectAccessReview (selfreview.go) says so.

import (
	"context"
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

// Upstream's names for the groups every user is in.
const (
	GroupAuthenticated = "system:authenticated"
	// GroupMasters is upstream's superuser group; its members are exempt
	// from the in-flight limits (inflight.go), as upstream exempts them.
	GroupMasters  = "system:masters"
	anonymousUser = "system:anonymous"
)

// UserInfo is who a request comes from.
type UserInfo struct {
	Name   string
	UID    string
	Groups []string
}

// inGroup reports whether u is a member of group.
func (u *UserInfo) inGroup(group string) bool {
	for _, g := range u.Groups {
		if g == group {
			return true
		}
	}
	return false
}

type userKey struct{}

// userFrom returns the user authenticate put in ctx, nil for a request on
// a public path that carried no credential.
func userFrom(ctx context.Context) *UserInfo {
	u, _ := ctx.Value(userKey{}).(*UserInfo)
	return u
}

// publicPaths are readable without a credential, as upstream's
// system:public-info-viewer role leaves them; the live page's login and
// nothing else is added. /metrics and /debug/* need a credential, as
// upstream.
var publicPaths = []string{"/healthz", "/livez", "/readyz", "/version", loginPath}

func isPublic(path string) bool {
	for _, p := range publicPaths {
		if isUnder(path, p) {
			return true
		}
	}
	return false
}

// tokenAuthenticator maps bearer tokens to users. It is built once in New
// and only read afterwards.
type tokenAuthenticator map[string]*UserInfo

// newTokenAuthenticator joins the tokens given in code with those of the
// token file, if any. Every user is also in system:authenticated.
func newTokenAuthenticator(tokens map[string]UserInfo, file string) (tokenAuthenticator, error) {
	a := tokenAuthenticator{}
	add := func(token string, u UserInfo) {
		if !u.inGroup(GroupAuthenticated) {
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
func (a tokenAuthenticator) lookup(token string) *UserInfo {
	var found *UserInfo
	for t, u := range a {
		if subtle.ConstantTimeCompare([]byte(t), []byte(token)) == 1 {
			found = u
		}
	}
	return found
}

// authenticate decides who sent req and puts the user in its context. It
// returns an error (401) when the request must not go further: a bearer
// token that is not known, or no credential on a path that needs one.
func (s *Server) authenticate(req *http.Request) (*http.Request, error) {
	defer reqtrace.From(req.Context()).Begin(reqtrace.Authentication)()
	u, err := s.credentialUser(req)
	if err != nil {
		return req, err
	}
	if u == nil {
		if s.cfg.AnonymousAuth {
			u = &UserInfo{Name: anonymousUser, Groups: []string{"system:unauthenticated"}}
		} else if !isPublic(req.URL.Path) {
			return req, errUnauthorized("this request carries no credential")
		}
	}
	return req.WithContext(context.WithValue(req.Context(), userKey{}, u)), nil
}

// credentialUser is the user of the request's bearer token or session
// cookie; nil (and no error) when it has neither.
func (s *Server) credentialUser(req *http.Request) (*UserInfo, error) {
	if header := req.Header.Get("Authorization"); header != "" {
		token, ok := strings.CutPrefix(header, "Bearer ")
		if !ok {
			return nil, errUnauthorized("the Authorization header is not a bearer token")
		}
		u := s.tokens.lookup(strings.TrimSpace(token))
		if u == nil {
			return nil, errUnauthorized("the bearer token is not valid")
		}
		return u, nil
	}
	return s.login.sessionUser(req), nil
}

// errUnauthorized is upstream's 401, with what to do about it.
func errUnauthorized(why string) error {
	return apierrors.NewUnauthorized(why + ": use the kubeconfig minicp wrote in its data directory " +
		"(export KUBECONFIG=<data-dir>/kubeconfig), which carries its bearer token; for raw paths use " +
		"kubectl get --raw <path> or kubectl proxy; for the live page open the login URL minicp printed at start")
}
