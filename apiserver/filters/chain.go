package filters

import "net/http"

// Chain is the part of the handler chain that decides whether a request
// is served at all, in the order doc.go gives. The server builds one in
// New; it is read-only while serving.
type Chain struct {
	Hosts    HostCheck
	Authn    Authenticator
	Inflight *InflightLimiter
	// Authorize is the authorization slot: it returns the error (403) to
	// answer a request the user may not make. Nil lets every
	// authenticated user do everything, which SelfSubjectAccessReview
	// reports.
	Authorize func(*http.Request) error
}

// Kind is what routing knows about a request that the limits need.
type Kind struct {
	// LongRunning requests (watches, profiles) hold no in-flight slot.
	LongRunning bool
	// Mutating requests count against the write limit.
	Mutating bool
}

// Check runs the checks that need no slot: Host, Origin, write
// Content-Type, then authentication. It returns the request with its user
// in the context, or the error to answer with (and the request as far as
// the checks got).
func (c *Chain) Check(req *http.Request) (*http.Request, error) {
	if err := c.Hosts.Check(req); err != nil {
		return req, err
	}
	if err := checkOrigin(req); err != nil {
		return req, err
	}
	if err := checkWriteContentType(req); err != nil {
		return req, err
	}
	return c.Authn.Authenticate(req)
}

// Admit runs what follows authentication: the in-flight limit, then
// authorization, as upstream orders them. On success the caller calls
// release when the request is done.
func (c *Chain) Admit(req *http.Request, kind Kind) (release func(), err error) {
	release, err = c.Inflight.acquire(req, kind.LongRunning, kind.Mutating)
	if err != nil {
		return nil, err
	}
	if c.Authorize != nil {
		if err := c.Authorize(req); err != nil {
			release()
			return nil, err
		}
	}
	return release, nil
}
