package auth

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// Frames Java 5.3.3's mqadmin sent, signed by its AclClientRPCHook with
// AccessKey rocketmq2 and SecretKey 12345678 (conf/tools.yml), captured
// on a bare socket:
//
//	create_user.bin  mqadmin createUser -u alice -p alice-pw -t Normal (body: UserInfo)
//	create_acl.bin   mqadmin createAcl -s User:alice -r Topic:orders,Group:g* -a Pub,Sub -i 10.0.0.0/8 -d Allow
func TestJavaClientSignatures(t *testing.T) {
	s := openTest(t, Config{AuthenticationEnabled: true})
	require.NoError(t, s.CreateUser(User{Username: "rocketmq2", Password: "12345678"}))
	require.NoError(t, s.CreateUser(User{Username: "other", Password: "wrong-secret"}))
	for _, name := range []string{"create_user.bin", "create_acl.bin"} {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(t, err)
		var f codec.Frame
		require.NoError(t, codec.Decode(raw[4:], &f), name)
		require.NotEmpty(t, f.Body, name)

		user, remark, ok := s.Authenticate(&f)
		require.True(t, ok, "%s: %s", name, remark)
		require.Equal(t, "rocketmq2", user)

		// The body is signed: one flipped byte fails.
		f.Body[len(f.Body)-2] ^= 1
		_, remark, ok = s.Authenticate(&f)
		require.False(t, ok, name)
		require.Equal(t, "check signature failed.", remark)
		f.Body[len(f.Body)-2] ^= 1

		// Another user's secret fails.
		f.Set(KeyAccessKey, "other")
		_, _, ok = s.Authenticate(&f)
		require.False(t, ok, name)
	}
}

// Frames the official Go client (rocketmq-client-go/v2 at 2173d07) sent
// to a name server, GET_ROUTEINFO_BY_TOPIC with credentials rocketmq2 /
// 12345678, captured on a bare socket:
//
//	go_route.bin        no SecurityToken
//	go_route_token.bin  SecurityToken "tok123"
func TestGoClientSignatures(t *testing.T) {
	s := openTest(t, Config{AuthenticationEnabled: true})
	require.NoError(t, s.CreateUser(User{Username: "rocketmq2", Password: "12345678"}))
	load := func(name string) *codec.Frame {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(t, err)
		f := new(codec.Frame)
		require.NoError(t, codec.Decode(raw[4:], f), name)
		return f
	}
	user, remark, ok := s.Authenticate(load("go_route.bin"))
	require.True(t, ok, remark)
	require.Equal(t, "rocketmq2", user)

	// The Go client's quirk, from a real frame: it sends SecurityToken
	// but signs as if it were absent. Java's server signs every key, and
	// so do we: such a client is refused.
	f := load("go_route_token.bin")
	require.Equal(t, "tok123", f.Value(KeySecurityToken))
	_, remark, ok = s.Authenticate(f)
	require.False(t, ok)
	require.Equal(t, "check signature failed.", remark)
	without := &codec.Frame{Code: f.Code, Version: f.Version, Body: f.Body}
	for _, kv := range f.Ext {
		if kv.Key != KeySecurityToken {
			without.Ext = append(without.Ext, kv)
		}
	}
	sig, _ := Sign(without, "12345678")
	require.Equal(t, f.Value(KeySignature), sig)
}

// FuzzAuthenticate: any decodable frame is answered, never a panic.
func FuzzAuthenticate(f *testing.F) {
	for _, name := range []string{"create_user.bin", "create_acl.bin", "go_route.bin", "go_route_token.bin"} {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(f, err)
		f.Add(raw[4:])
	}
	s, err := Open(Config{AuthenticationEnabled: true}, f.TempDir(), nil)
	require.NoError(f, err)
	defer s.Close()
	require.NoError(f, s.CreateUser(User{Username: "rocketmq2", Password: "12345678"}))
	f.Fuzz(func(t *testing.T, payload []byte) {
		var fr codec.Frame
		if codec.Decode(payload, &fr) != nil {
			return
		}
		user, remark, ok := s.Authenticate(&fr)
		if ok != (remark == "") || (!ok && user != "") {
			t.Fatalf("inconsistent answer: %q %q %v", user, remark, ok)
		}
	})
}
