package auth

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/body"
)

func entry(res string, decision string, actions ...string) body.PolicyEntryInfo {
	return body.PolicyEntryInfo{Resource: res, Actions: actions, Decision: decision}
}

func putACL(t *testing.T, s *Service, user string, policies ...body.PolicyInfo) {
	t.Helper()
	a, ok := ACLFromInfo(&body.AclInfo{Subject: "User:" + user, Policies: policies}, "")
	require.True(t, ok)
	require.NoError(t, s.PutACL(a))
}

func custom(entries ...body.PolicyEntryInfo) body.PolicyInfo {
	return body.PolicyInfo{PolicyType: "Custom", Entries: entries}
}

var ip10 = netip.MustParseAddr("10.0.0.1")

func authzService(t *testing.T) *Service {
	s := openTest(t, Config{AuthorizationEnabled: true, AuthorizationWhitelist: "34"})
	for _, u := range []string{"alice", "bob", "carol", "dave", "erin"} {
		require.NoError(t, s.CreateUser(User{Username: u, Password: "pw-" + u}))
	}
	require.NoError(t, s.CreateUser(User{Username: "root", Password: "pw", Type: UserSuper}))
	return s
}

// TestAuthorizeOrdering pins which of several matching entries decides,
// as Java 5.3.3's comparator and TimSort decide it.
func TestAuthorizeOrdering(t *testing.T) {
	s := authzService(t)
	// A literal beats "*", whatever the order.
	putACL(t, s, "alice", custom(entry("*", "Allow", "All"), entry("Topic:foo", "Deny", "Pub")))
	// Prefix and literal compare as "first argument smaller": with the
	// prefix first the literal decides, with the literal first the prefix.
	putACL(t, s, "bob", custom(entry("Topic:foo*", "Deny", "Pub"), entry("Topic:foo", "Allow", "Pub")))
	putACL(t, s, "carol", custom(entry("Topic:foo", "Allow", "Pub"), entry("Topic:foo*", "Deny", "Pub")))
	// Two prefixes: the shorter one decides.
	putACL(t, s, "dave", custom(entry("Topic:f*", "Allow", "Pub"), entry("Topic:foo*", "Deny", "Pub")))
	// The same resource twice in one body: Allow sorts before Deny.
	putACL(t, s, "erin", custom(entry("Topic:foo", "Deny", "Pub"), entry("Topic:foo", "Allow", "Pub")))

	foo := []Resource{Topic("foo")}
	for _, c := range []struct {
		user   string
		remark string // "" = allowed
	}{
		{"alice", "User:alice has no permission to access Topic:foo from 10.0.0.1, the decision is deny."},
		{"bob", ""},
		{"carol", "User:carol has no permission to access Topic:foo from 10.0.0.1, the decision is deny."},
		{"dave", ""},
		{"erin", ""},
	} {
		remark, ok := s.Authorize(c.user, 10, ip10, ActionPub, foo)
		require.Equal(t, c.remark == "", ok, c.user)
		require.Equal(t, c.remark, remark, c.user)
	}
	// alice's "*" still allows everything else.
	_, ok := s.Authorize("alice", 10, ip10, ActionSub, []Resource{Group("g")})
	require.True(t, ok)
}

func TestAuthorizeRules(t *testing.T) {
	s := authzService(t)
	putACL(t, s, "alice",
		custom(
			entry("Topic:orders", "Allow", "Pub", "Get"),
			body.PolicyEntryInfo{Resource: "Topic:local", Actions: []string{"Sub"}, Decision: "Allow", SourceIps: []string{"10.0.0.0/8", "192.168.1.5"}},
			entry("Group:app", "Allow", "Sub"),
		),
		body.PolicyInfo{PolicyType: "Default", Entries: []body.PolicyEntryInfo{entry("Topic:*", "Deny", "All"), entry("Group:*", "Allow", "Sub")}},
	)
	noMatch := func(res string, from netip.Addr) string {
		return "User:alice has no permission to access " + res + " from " + from.String() + ", no matched policies."
	}
	for _, c := range []struct {
		name   string
		action Action
		res    Resource
		ip     netip.Addr
		remark string
	}{
		{"literal allow", ActionPub, Topic("orders"), ip10, ""},
		{"one of several asked actions", ActionSub | ActionGet, Topic("orders"), ip10, ""},
		{"any action", ActionAny, Topic("orders"), ip10, ""},
		{"action not granted falls to Default", ActionSub, Topic("orders"), ip10,
			"User:alice has no permission to access Topic:orders from 10.0.0.1, the decision is deny."},
		{"Default deny for other topics", ActionPub, Topic("other"), ip10,
			"User:alice has no permission to access Topic:other from 10.0.0.1, the decision is deny."},
		{"cidr", ActionSub, Topic("local"), netip.MustParseAddr("10.200.3.4"), ""},
		{"exact ip", ActionSub, Topic("local"), netip.MustParseAddr("192.168.1.5"), ""},
		{"mapped ipv4", ActionSub, Topic("local"), netip.MustParseAddr("::ffff:10.1.1.1"), ""},
		{"outside the sources falls to Default", ActionSub, Topic("local"), netip.MustParseAddr("172.16.0.1"),
			"User:alice has no permission to access Topic:local from 172.16.0.1, the decision is deny."},
		{"retry topic names its group", ActionSub, Group("%RETRY%app"), ip10, ""},
		{"Default group allow", ActionSub, Group("else"), ip10, ""},
		{"nothing matches", ActionPub, Cluster("c1"), ip10, noMatch("Cluster:c1", ip10)},
	} {
		remark, ok := s.Authorize("alice", 10, c.ip, c.action, []Resource{c.res})
		require.Equal(t, c.remark == "", ok, c.name)
		require.Equal(t, c.remark, remark, c.name)
	}

	// Every resource must pass; the first refusal is the answer.
	remark, ok := s.Authorize("alice", 11, ip10, ActionSub, []Resource{Group("app"), Topic("other")})
	require.False(t, ok)
	require.Equal(t, "User:alice has no permission to access Topic:other from 10.0.0.1, the decision is deny.", remark)

	// No ACL at all, unknown user, no user, super user, whitelist, off.
	remark, ok = s.Authorize("bob", 10, ip10, ActionPub, []Resource{Topic("t")})
	require.False(t, ok)
	require.Equal(t, "User:bob has no permission to access Topic:t from 10.0.0.1, no matched policies.", remark)
	remark, ok = s.Authorize("nobody", 10, ip10, ActionPub, []Resource{Topic("t")})
	require.False(t, ok)
	require.Equal(t, "User:nobody not found.", remark)
	remark, ok = s.Authorize("", 10, ip10, ActionPub, []Resource{Topic("t")})
	require.False(t, ok)
	require.Equal(t, "Authorization failed. Please verify your access rights and try again.", remark)
	_, ok = s.Authorize("root", 10, ip10, ActionPub, []Resource{Topic("t")})
	require.True(t, ok)
	_, ok = s.Authorize("nobody", 34, ip10, ActionPub, []Resource{Topic("t")})
	require.True(t, ok)
	off := openTest(t, Config{})
	_, ok = off.Authorize("nobody", 10, ip10, ActionPub, []Resource{Topic("t")})
	require.True(t, ok)
}

func TestAuthorizeAllocs(t *testing.T) {
	s := authzService(t)
	putACL(t, s, "alice", custom(entry("Topic:foo*", "Deny", "Pub"), entry("Topic:foo", "Allow", "Pub"),
		body.PolicyEntryInfo{Resource: "Group:g", Actions: []string{"Sub"}, Decision: "Allow", SourceIps: []string{"10.0.0.0/8"}}))
	res := []Resource{Topic("foo"), Group("g")}
	allocs := testing.AllocsPerRun(200, func() {
		if r, ok := s.Authorize("alice", 10, ip10, ActionPub|ActionSub, res); !ok {
			panic(r)
		}
	})
	require.Zero(t, allocs)
}

func BenchmarkAuthorize(b *testing.B) {
	s, err := Open(Config{AuthorizationEnabled: true}, b.TempDir(), nil)
	require.NoError(b, err)
	defer s.Close()
	require.NoError(b, s.CreateUser(User{Username: "alice", Password: "pw"}))
	a, _ := ACLFromInfo(&body.AclInfo{Subject: "User:alice", Policies: []body.PolicyInfo{custom(
		entry("Topic:foo*", "Deny", "Pub"), entry("Topic:foo", "Allow", "Pub"), entry("Group:g", "Allow", "Sub"), entry("*", "Deny", "All"))}}, "")
	require.NoError(b, s.PutACL(a))
	res := []Resource{Topic("foo")}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if r, ok := s.Authorize("alice", 10, ip10, ActionPub, res); !ok {
				b.Fatal(r)
			}
		}
	})
}

// TestConcurrentChecksAndChanges: checks run while users and ACLs change
// (run with -race); every answer is one of the two states.
func TestConcurrentChecksAndChanges(t *testing.T) {
	s := authzService(t)
	allow := custom(entry("Topic:t", "Allow", "Pub"))
	deny := custom(entry("Topic:t", "Deny", "Pub"))
	putACL(t, s, "alice", allow)
	done := make(chan struct{})
	errs := make(chan string, 4)
	for range 2 {
		go func() {
			for {
				select {
				case <-done:
					errs <- ""
					return
				default:
				}
				remark, ok := s.Authorize("alice", 10, ip10, ActionPub, []Resource{Topic("t")})
				if !ok && remark != "User:alice has no permission to access Topic:t from 10.0.0.1, the decision is deny." {
					errs <- remark
					return
				}
			}
		}()
	}
	for i := range 50 {
		if i%2 == 0 {
			putACL(t, s, "alice", deny)
		} else {
			putACL(t, s, "alice", allow)
		}
		require.NoError(t, s.CreateUser(User{Username: "u" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Password: "pw"}))
	}
	close(done)
	for range 2 {
		require.Empty(t, <-errs)
	}
}
