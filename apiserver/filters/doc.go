// Package filters is what stands between a connection and the apiserver's
// handlers: the checks every request passes before it is routed, the
// limits on what is served at once, and the deadline around each request.
// The order follows upstream's handler chain, outermost first:
//
//  1. Connections (connlimit.go): at most MaxConnections open at once, a
//     cap below the open-files limit so that etcd, in the same process,
//     keeps descriptors for its own files; further clients wait to be
//     accepted. Nothing is answered: the kernel holds them.
//  2. Host (checks.go, HostCheck): a Host header that names neither
//     loopback, the bind address nor the serving certificate is 400
//     BadRequest (DNS rebinding).
//  3. Origin (checks.go): a write sent by a page of another origin is 403
//     Forbidden.
//  4. Content-Type (checks.go): a write whose body is not JSON, YAML,
//     protobuf or a patch is 415 UnsupportedMediaType, so that a page
//     cannot send one without a CORS preflight.
//  5. Authentication (authn.go, Authenticator): the bearer token, or the
//     live page's session cookie for reads, says who the user is
//     (UserFrom); without a valid one 401 Unauthorized, except on
//     PublicInfoPaths and the login.
//  6. In-flight limit (inflight.go): beyond --max-requests-inflight reads
//     or --max-mutating-requests-inflight writes, 429 TooManyRequests with
//     Retry-After. After authentication, as upstream, so that
//     system:masters can be exempt; watches and the health endpoints are.
//  7. Authorization (Chain.Authorize): the slot where a user's right to
//     the request is decided (403 Forbidden); empty for now, so every
//     authenticated user may do everything.
//  8. Timeout (timeout.go, Timeouts): every request but a watch runs
//     under the request deadline (?timeout= may shorten it); past it, 504
//     Timeout. Unlike upstream, the deadline starts when the request is
//     dispatched, after the checks above, which answer at once.
//
// Then the apiserver dispatches the request to the handler of its path.
// The host, origin and content-type checks come first because they
// refuse what a web page could make a browser send, before any credential
// the browser holds is looked at. Every refusal is a Kubernetes Status
// error with upstream's code and reason; the apiserver writes it.
package filters
