package body

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUserInfoJSON(t *testing.T) {
	u := UserInfo{Username: "alice", Password: "p\"w", UserType: "Normal", UserStatus: "enable"}
	b := AppendUserInfo(nil, &u)
	require.Equal(t, `{"password":"p\"w","userStatus":"enable","userType":"Normal","username":"alice"}`, string(b))
	got, err := DecodeUserInfo(b)
	require.NoError(t, err)
	require.Equal(t, u, got)
	// What mqadmin createUser sends: nulls left out, or written as null.
	got, err = DecodeUserInfo([]byte(`{"password":"12345678","userType":null,"username":"bob","extra":[1]}`))
	require.NoError(t, err)
	require.Equal(t, UserInfo{Username: "bob", Password: "12345678"}, got)

	list := []UserInfo{{Username: "a", Password: "1"}, {Username: "b", UserType: "Super"}}
	b = AppendUserInfoList(nil, list)
	require.Equal(t, `[{"password":"1","username":"a"},{"userType":"Super","username":"b"}]`, string(b))
	back, err := DecodeUserInfoList(b)
	require.NoError(t, err)
	require.Equal(t, list, back)

	_, err = DecodeUserInfo([]byte(`{"username":`))
	require.Error(t, err)
}

func TestAclInfoJSON(t *testing.T) {
	// As Java's JSON.toJSONString(AclInfo) writes it: fields sorted, nulls out.
	const java = `{"policies":[{"entries":[{"actions":["Pub","Sub"],"decision":"Allow","resource":"Topic:t*","sourceIps":["10.0.0.0/8"]},{"actions":["All"],"decision":"Deny","resource":"*"}],"policyType":"Custom"}],"subject":"User:alice"}`
	a, err := DecodeAclInfo([]byte(java))
	require.NoError(t, err)
	require.Equal(t, AclInfo{Subject: "User:alice", Policies: []PolicyInfo{{PolicyType: "Custom", Entries: []PolicyEntryInfo{
		{Resource: "Topic:t*", Actions: []string{"Pub", "Sub"}, SourceIps: []string{"10.0.0.0/8"}, Decision: "Allow"},
		{Resource: "*", Actions: []string{"All"}, Decision: "Deny"},
	}}}}, a)
	require.Equal(t, java, string(AppendAclInfo(nil, &a)))

	// null and absent lists stay nil; [] stays empty.
	a, err = DecodeAclInfo([]byte(`{"subject":"User:x","policies":null}`))
	require.NoError(t, err)
	require.Nil(t, a.Policies)
	a, err = DecodeAclInfo([]byte(`{"policies":[{"entries":[{"resource":"Topic:t","actions":null,"sourceIps":[]}]}]}`))
	require.NoError(t, err)
	require.Nil(t, a.Policies[0].Entries[0].Actions)
	require.NotNil(t, a.Policies[0].Entries[0].SourceIps)

	list := []AclInfo{{Subject: "User:a"}, {Subject: "User:b", Policies: []PolicyInfo{}}}
	b := AppendAclInfoList(nil, list)
	require.Equal(t, `[{"subject":"User:a"},{"policies":[],"subject":"User:b"}]`, string(b))
	back, err := DecodeAclInfoList(b)
	require.NoError(t, err)
	require.Equal(t, list, back)
}

func FuzzDecodeAclInfo(f *testing.F) {
	f.Add([]byte(`{"policies":[{"entries":[{"actions":["Pub"],"decision":"Allow","resource":"Topic:t"}]}],"subject":"User:a"}`))
	f.Add([]byte(`[{"username":"a"}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		// decode → encode → decode → encode is stable (the first encode
		// may differ from the input: invalid UTF-8 becomes U+FFFD).
		if a, err := DecodeAclInfo(b); err == nil {
			enc := AppendAclInfo(nil, &a)
			again, err := DecodeAclInfo(enc)
			require.NoError(t, err)
			require.Equal(t, string(enc), string(AppendAclInfo(nil, &again)))
		}
		_, _ = DecodeUserInfo(b)
		_, _ = DecodeUserInfoList(b)
		_, _ = DecodeAclInfoList(b)
	})
}
