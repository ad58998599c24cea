package auth

import (
	"net/netip"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/body"
)

// Remembered decisions never outlive the metadata they came from: each
// change of an ACL or a user answers at once, and the same question
// asked again (from the cache) answers the same.
func TestDecisionsFollowChanges(t *testing.T) {
	s := authzService(t)
	foo := []Resource{Topic("foo")}
	allowed := func() bool {
		_, ok := s.Authorize("alice", 10, ip10, ActionPub, foo)
		_, again := s.Authorize("alice", 10, ip10, ActionPub, foo)
		require.Equal(t, ok, again, "the remembered answer differs")
		return ok
	}
	require.False(t, allowed(), "no ACL")
	putACL(t, s, "alice", custom(entry("Topic:foo", "Allow", "Pub")))
	require.True(t, allowed())
	putACL(t, s, "alice", custom(entry("Topic:foo", "Deny", "Pub"), entry("Topic:foo", "Allow", "Pub")))
	require.True(t, allowed(), "Allow sorts first (Java)")
	res, ok := ParseResourcePattern("Topic:foo")
	require.True(t, ok)
	require.NoError(t, s.DeleteACL("alice", PolicyCustom, res, true))
	require.False(t, allowed(), "entry deleted")
	putACL(t, s, "alice", custom(entry("Topic:foo", "Allow", "Pub")))
	require.True(t, allowed())
	require.NoError(t, s.UpdateUser(User{Username: "alice", Type: UserSuper}))
	require.True(t, allowed())
	require.NoError(t, s.DeleteUser("alice"))
	require.False(t, allowed(), "user deleted")
	// Another source address is another question.
	require.NoError(t, s.CreateUser(User{Username: "alice", Password: "pw"}))
	putACL(t, s, "alice", custom(entryFrom("Topic:foo", "Allow", "10.0.0.0/24", "Pub")))
	require.True(t, allowed())
	_, ok = s.Authorize("alice", 10, ip10.Next().Next().Next(), ActionPub, foo)
	require.True(t, ok)
	_, ok = s.Authorize("alice", 10, mustAddr("10.0.1.1"), ActionPub, foo)
	require.False(t, ok)
}

// Requests naming ever new resources do not grow the cache past its bound,
// and are still answered right beyond it.
func TestDecisionsBounded(t *testing.T) {
	s := authzService(t)
	putACL(t, s, "alice", custom(entry("Topic:t*", "Allow", "Pub")))
	for i := range maxDecisions + 500 {
		name := "t" + strconv.Itoa(i)
		_, ok := s.Authorize("alice", 10, ip10, ActionPub, []Resource{Topic(name)})
		require.True(t, ok, name)
	}
	_, ok := s.Authorize("alice", 10, ip10, ActionPub, []Resource{Topic("u1")})
	require.False(t, ok)
	d := s.state.Load().decided
	d.mu.RLock()
	defer d.mu.RUnlock()
	require.Equal(t, maxDecisions, len(d.m))
}

// A remembered pass allocates nothing.
func TestDecisionsAllocs(t *testing.T) {
	s := authzService(t)
	putACL(t, s, "alice", custom(entry("Topic:foo", "Allow", "Pub")))
	foo := []Resource{Topic("foo")}
	allocs := testing.AllocsPerRun(100, func() {
		if _, ok := s.Authorize("alice", 10, ip10, ActionPub, foo); !ok {
			panic("refused")
		}
	})
	require.Zero(t, allocs)
}

func entryFrom(res, decision, source string, actions ...string) body.PolicyEntryInfo {
	e := entry(res, decision, actions...)
	e.SourceIps = []string{source}
	return e
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }
