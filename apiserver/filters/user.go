package filters

import "context"

// Upstream's names for the groups every user is in, and for the user of
// a request without a credential.
const (
	GroupAuthenticated = "system:authenticated"
	// GroupMasters is upstream's superuser group; its members are exempt
	// from the in-flight limits (inflight.go), as upstream exempts them.
	GroupMasters         = "system:masters"
	groupUnauthenticated = "system:unauthenticated"
	anonymousUser        = "system:anonymous"
)

// UserInfo is who a request comes from.
type UserInfo struct {
	Name   string
	UID    string
	Groups []string
}

// InGroup reports whether u is a member of group.
func (u *UserInfo) InGroup(group string) bool {
	for _, g := range u.Groups {
		if g == group {
			return true
		}
	}
	return false
}

type userKey struct{}

// withUser returns ctx carrying u, as authentication leaves it.
func withUser(ctx context.Context, u *UserInfo) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the user authentication put in ctx, nil for a request
// on a public path that carried no credential.
func UserFrom(ctx context.Context) *UserInfo {
	u, _ := ctx.Value(userKey{}).(*UserInfo)
	return u
}

// isUnder reports whether path is root or below it.
func isUnder(path, root string) bool {
	return path == root || (len(path) > len(root) && path[:len(root)] == root && path[len(root)] == '/')
}
