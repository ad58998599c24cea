package auth

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/body"
)

func requireDenied(t *testing.T, err error, msg string) {
	t.Helper()
	var d *DeniedError
	require.True(t, errors.As(err, &d), "%v", err)
	require.Equal(t, msg, d.Msg)
}

// TestReopenKeepsEverything: what a write returned for is on disk; a
// second Open (as after a kill: nothing is flushed at Close) sees it.
func TestReopenKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	log := slog.New(slog.DiscardHandler)
	s, err := Open(Config{}, dir, log)
	require.NoError(t, err)
	require.NoError(t, s.CreateUser(User{Username: "alice", Password: "pw1"}))
	require.NoError(t, s.CreateUser(User{Username: "bob", Password: "pw2", Type: UserSuper}))
	require.NoError(t, s.UpdateUser(User{Username: "alice", Status: UserDisabled}))
	putACL(t, s, "alice", custom(body.PolicyEntryInfo{Resource: "Topic:t*", Actions: []string{"Pub", "Sub"}, SourceIps: []string{"10.0.0.0/8"}, Decision: "Allow"}))
	putACL(t, s, "bob", custom(entry("Group:g", "Deny", "Sub")))
	require.NoError(t, s.DeleteUser("bob")) // and its ACL
	want := s.ListUsers("")
	wantACLs := s.ListACLs("", "")
	// Simulate a kill: no Close of s; bbolt's lock is per handle, so
	// close only the file handle, the way the process exit would.
	require.NoError(t, s.store.db.Close())

	s2, err := Open(Config{}, dir, log)
	require.NoError(t, err)
	defer s2.Close()
	require.Equal(t, want, s2.ListUsers(""))
	require.Equal(t, []User{{Username: "alice", Password: "pw1", Type: UserNormal, Status: UserDisabled}}, want)
	got := s2.ListACLs("", "")
	require.Equal(t, infos(wantACLs), infos(got))
	require.Len(t, got, 1)
	require.Equal(t, `{"policies":[{"entries":[{"actions":["Pub","Sub"],"decision":"Allow","resource":"Topic:t*","sourceIps":["10.0.0.0/8"]}],"policyType":"Custom"}],"subject":"User:alice"}`,
		string(body.AppendAclInfo(nil, ptr(got[0].Info()))))
	// The reloaded ACL is compiled: its source IPs work.
	s2.cfg.AuthorizationEnabled = true
	_, ok := s2.Authorize("alice", 10, ip10, ActionSub, []Resource{Topic("tx")})
	require.True(t, ok)
}

func ptr[T any](v T) *T { return &v }

func infos(acls []ACL) []body.AclInfo {
	out := make([]body.AclInfo, len(acls))
	for i := range acls {
		out[i] = acls[i].Info()
	}
	return out
}

func TestOpenRefusesACorruptRecord(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Config{}, dir, nil)
	require.NoError(t, err)
	require.NoError(t, s.CreateUser(User{Username: "alice", Password: "pw"}))
	require.NoError(t, s.store.db.Update(func(tx *bboltTx) error {
		return tx.Bucket(bucketUsers).Put([]byte("alice"), []byte(`{"username":`))
	}))
	require.NoError(t, s.Close())
	_, err = Open(Config{}, dir, nil)
	require.ErrorContains(t, err, `auth: load metadata: user "alice"`)
}

func TestInitUsers(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{
		InitAuthenticationUser:               `{"username":"rocketmq","password":"12345678"}`,
		InnerClientAuthenticationCredentials: `{"accessKey":"inner","secretKey":"inner-secret"}`,
	}
	s, err := Open(cfg, dir, nil)
	require.NoError(t, err)
	require.Equal(t, []User{
		{Username: "inner", Password: "inner-secret", Type: UserSuper, Status: UserEnabled},
		{Username: "rocketmq", Password: "12345678", Type: UserSuper, Status: UserEnabled},
	}, s.ListUsers(""))
	// An existing user is left as it is at the next start.
	require.NoError(t, s.UpdateUser(User{Username: "rocketmq", Password: "changed"}))
	require.NoError(t, s.Close())
	s, err = Open(cfg, dir, nil)
	require.NoError(t, err)
	u, ok, err := s.GetUser("rocketmq")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "changed", u.Password)
	require.NoError(t, s.Close())

	_, err = Open(Config{InitAuthenticationUser: `{"username":`}, t.TempDir(), nil)
	require.ErrorContains(t, err, "Init authentication user error")
	_, err = Open(Config{InitAuthenticationUser: `{"username":"x"}`}, t.TempDir(), nil)
	require.ErrorContains(t, err, "password can not be blank")
}

func TestUserAndACLRefusals(t *testing.T) {
	s := openTest(t, Config{})
	require.NoError(t, s.CreateUser(User{Username: "alice", Password: "pw"}))
	requireDenied(t, s.CreateUser(User{Username: "alice", Password: "pw"}), "The user is existed")
	requireDenied(t, s.CreateUser(User{Username: " ", Password: "pw"}), "username can not be blank")
	requireDenied(t, s.CreateUser(User{Username: "x"}), "password can not be blank")
	requireDenied(t, s.UpdateUser(User{Username: "nobody"}), "The user is not exist")
	require.NoError(t, s.DeleteUser("nobody"))
	_, _, err := s.GetUser("")
	requireDenied(t, err, "username can not be blank")
	_, err = s.IsSuperUser("nobody")
	requireDenied(t, err, "User:nobody is not found")

	acl := func(entries ...body.PolicyEntryInfo) ACL {
		a, ok := ACLFromInfo(&body.AclInfo{Policies: []body.PolicyInfo{{Entries: entries}}}, "User:alice")
		require.True(t, ok)
		return a
	}
	for _, c := range []struct {
		acl ACL
		msg string
	}{
		{ACL{Username: "alice"}, "The policies is empty."},
		{acl(entry("Topic:", "Allow")), "The actions is empty."},
		{acl(entry("Bogus:x", "Allow", "Pub")), "The resource is null."},
		{acl(entry("Topic:t", "Allow", "Any")), "The actions can not be Any."},
		{acl(entry("Topic:t", "Maybe", "Pub")), "The decision is null or illegal."},
		{acl(body.PolicyEntryInfo{Resource: "Topic:t", Actions: []string{"Pub"}, Decision: "Allow", SourceIps: []string{""}}), "The source ip is empty."},
		{acl(body.PolicyEntryInfo{Resource: "Topic:t", Actions: []string{"Pub"}, Decision: "Allow", SourceIps: []string{"10.0.0.0/33"}}), "The source ip is invalid."},
		{ACL{Username: "nobody", Policies: acl(entry("Topic:t", "Allow", "Pub")).Policies}, "The subject of User:nobody is not exist."},
	} {
		requireDenied(t, s.PutACL(c.acl), c.msg)
	}
	requireDenied(t, s.DeleteACL("nobody", 0, ResourcePattern{}, false), "The subject is not exist.")
	requireDenied(t, s.DeleteACL("alice", 0, ResourcePattern{}, false), "The acl is not exist.")
	_, _, err = s.GetACL("nobody")
	requireDenied(t, err, "The subject is not exist.")
	_, ok, err := s.GetACL("alice")
	require.NoError(t, err)
	require.False(t, ok)
}

func TestACLMergeDeleteList(t *testing.T) {
	s := openTest(t, Config{})
	for _, u := range []string{"alice", "bob"} {
		require.NoError(t, s.CreateUser(User{Username: u, Password: "pw"}))
	}
	putACL(t, s, "alice", body.PolicyInfo{Entries: []body.PolicyEntryInfo{entry("Topic:a", "Allow", "Pub"), entry("Topic:b", "Allow", "Pub")}})
	// Same resource replaced, new one appended, new policy type added.
	putACL(t, s, "alice", custom(entry("Topic:b", "Deny", "Sub"), entry("Group:g", "Allow", "Sub")),
		body.PolicyInfo{PolicyType: "Default", Entries: []body.PolicyEntryInfo{entry("*", "Deny", "All")}})
	putACL(t, s, "bob", custom(entry("Topic:alpha", "Allow", "Pub")))
	a, ok, err := s.GetACL("alice")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, `{"policies":[{"entries":[{"actions":["Pub"],"decision":"Allow","resource":"Topic:a"},{"actions":["Sub"],"decision":"Deny","resource":"Topic:b"},{"actions":["Sub"],"decision":"Allow","resource":"Group:g"}],"policyType":"Custom"},{"entries":[{"actions":["All"],"decision":"Deny","resource":"*"}],"policyType":"Default"}],"subject":"User:alice"}`,
		string(body.AppendAclInfo(nil, ptr(a.Info()))))

	// Filters: subject contains, resource contains.
	require.Len(t, s.ListACLs("bob", ""), 1)
	got := s.ListACLs("", "Topic:a")
	require.Len(t, got, 2)
	require.Equal(t, "Topic:a", got[0].Policies[0].Entries[0].Resource.Key())
	require.Len(t, got[0].Policies, 1) // alice's Default policy has no Topic:a entry
	require.Equal(t, "Topic:alpha", got[1].Policies[0].Entries[0].Resource.Key())
	// compat: a resource filter the subject key contains filters nothing.
	got = s.ListACLs("alice", "alice")
	require.Len(t, got[0].Policies, 2)

	// Delete one entry; the last entry of a policy takes the policy.
	require.NoError(t, s.DeleteACL("alice", PolicyDefault, ResourcePattern{Type: ResourceAny, Pattern: PatternAny}, true))
	a, _, _ = s.GetACL("alice")
	require.Len(t, a.Policies, 1)
	r, _ := ParseResourcePattern("Topic:a")
	require.NoError(t, s.DeleteACL("alice", 0, r, true))
	a, _, _ = s.GetACL("alice")
	require.Len(t, a.Policies[0].Entries, 2)
	// No resource: the whole ACL.
	require.NoError(t, s.DeleteACL("alice", 0, ResourcePattern{}, false))
	_, ok, _ = s.GetACL("alice")
	require.False(t, ok)

	require.Equal(t, []string{"alice", "bob"}, names(s.ListUsers("")))
	require.Equal(t, []string{"bob"}, names(s.ListUsers("ob")))
}

func names(us []User) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.Username)
	}
	return out
}

func TestParseResourcePattern(t *testing.T) {
	for key, want := range map[string]ResourcePattern{
		"*":            {Type: ResourceAny, Pattern: PatternAny},
		"Topic:*":      {Type: ResourceTopic, Pattern: PatternAny},
		"topic:foo*":   {Type: ResourceTopic, Name: "foo", Pattern: PatternPrefixed},
		"Group:g":      {Type: ResourceGroup, Name: "g", Pattern: PatternLiteral},
		"Cluster:c":    {Type: ResourceCluster, Name: "c", Pattern: PatternLiteral},
		"Namespace:n*": {Type: ResourceNamespace, Name: "n", Pattern: PatternPrefixed},
	} {
		got, ok := ParseResourcePattern(key)
		require.True(t, ok, key)
		require.Equal(t, want, got, key)
	}
	for _, bad := range []string{"", " ", "Queue:q", "foo"} {
		_, ok := ParseResourcePattern(bad)
		require.False(t, ok, bad)
	}
	r, _ := ParseResourcePattern("topic:foo*")
	require.Equal(t, "Topic:foo*", r.Key())
}

func TestMigrateFromV1(t *testing.T) {
	dir := t.TempDir()
	yml := filepath.Join(dir, "plain_acl.yml")
	require.NoError(t, os.WriteFile(yml, []byte(`globalWhiteRemoteAddresses:
  - 10.10.103.*
accounts:
  - accessKey: RocketMQ
    secretKey: 12345678
    whiteRemoteAddress:
    admin: false
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms:
      - topicA=DENY
      - topicB=PUB|SUB
      - topicC=SUB
      - broken
    groupPerms:
      - groupA=DENY
      - "%RETRY%groupB=PUB|SUB"
  - accessKey: rocketmq2
    secretKey: 12345678
    admin: true
  - accessKey: RocketMQ
    secretKey: duplicate-ignored
`), 0o644))
	s, err := Open(Config{MigrateAuthFromV1Enabled: true, PlainACLFile: yml}, filepath.Join(dir, "auth"), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, []User{
		{Username: "RocketMQ", Password: "12345678", Type: UserNormal, Status: UserEnabled},
		{Username: "rocketmq2", Password: "12345678", Type: UserSuper, Status: UserEnabled},
	}, s.ListUsers(""))
	a, ok, err := s.GetACL("RocketMQ")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, `{"policies":[{"entries":[`+
		`{"actions":["All"],"decision":"Deny","resource":"Topic:topicA"},`+
		`{"actions":["Pub","Sub"],"decision":"Allow","resource":"Topic:topicB"},`+
		`{"actions":["Sub"],"decision":"Allow","resource":"Topic:topicC"},`+
		`{"actions":["All"],"decision":"Deny","resource":"Group:groupA"},`+
		`{"actions":["Pub","Sub"],"decision":"Allow","resource":"Group:groupB"}],"policyType":"Custom"},`+
		`{"entries":[{"actions":["All"],"decision":"Deny","resource":"Topic:*"},{"actions":["Sub"],"decision":"Allow","resource":"Group:*"}],"policyType":"Default"}],`+
		`"subject":"User:RocketMQ"}`, string(body.AppendAclInfo(nil, ptr(a.Info()))))
	_, ok, err = s.GetACL("rocketmq2")
	require.NoError(t, err)
	require.False(t, ok) // no permissions listed: no ACL
}
