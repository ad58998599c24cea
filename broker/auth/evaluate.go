package auth

import (
	"net/netip"

	"github.com/rocketgo/rocketgo/compat/remarks"
)

// AuthorizeUser is Authorize without its request-code checks (whether
// authorization is on and the code whitelist): for callers that name
// requests otherwise, like the gRPC endpoint, whose whitelist holds
// message names (Java's rpcCode there).
func (s *Service) AuthorizeUser(user string, sourceIP netip.Addr, action Action, res []Resource) (remark string, ok bool) {
	if len(res) == 0 {
		return "", true
	}
	if user == "" {
		return remarks.AuthorizationFailed, false
	}
	st := s.state.Load()
	u, found := st.users[user]
	if !found {
		return remarks.AuthzUserNotFound(user), false
	}
	// compat: Java checks the disabled status on the request's subject,
	// which never carries one, so a disabled user is not refused here.
	if u.Type == UserSuper {
		return "", true
	}
	acl := st.acls[user]
	for i := range res {
		if detail := st.decided.decide(user, acl, &res[i], action, sourceIP); detail != "" {
			return noPermission(user, &res[i], sourceIP, detail), false
		}
	}
	return "", true
}

// Evaluate is AuthorizeUser's decision on a user and ACL the caller holds
// (Java's proxy in cluster mode reads them from a broker with AUTH_GET_USER
// and AUTH_GET_ACL): u nil is an unknown user, acl nil a user without an
// ACL. acl must have been through Prepare.
func Evaluate(user string, u *User, acl *ACL, sourceIP netip.Addr, action Action, res []Resource) (remark string, ok bool) {
	if len(res) == 0 {
		return "", true
	}
	if user == "" {
		return remarks.AuthorizationFailed, false
	}
	if u == nil {
		return remarks.AuthzUserNotFound(user), false
	}
	if u.Type == UserSuper {
		return "", true
	}
	for i := range res {
		if detail := decide(acl, &res[i], action, sourceIP); detail != "" {
			return noPermission(user, &res[i], sourceIP, detail), false
		}
	}
	return "", true
}

// Prepare readies an ACL built outside the service (ACLFromInfo) for
// Evaluate: it compiles the entries' actions and source addresses.
func (a *ACL) Prepare() { a.compile() }
