package auth

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

func frame(body string, kv ...string) *codec.Frame {
	f := &codec.Frame{Code: int32(codec.ReqSendMessage), Version: 479}
	for i := 0; i+1 < len(kv); i += 2 {
		f.Ext = append(f.Ext, codec.KV{Key: kv[i], Value: kv[i+1]})
	}
	if body != "" {
		f.Body = []byte(body)
	}
	return f
}

// TestSignGolden: a vector computed outside Go (Python's hmac over the
// values sorted by key, then the body).
func TestSignGolden(t *testing.T) {
	f := frame("hello", "topic", "TopicTest", "AccessKey", "rocketmq2", "queueId", "1", "producerGroup", "PG", "a", "x", "Zed", "z")
	sig, ok := Sign(f, "12345678")
	require.True(t, ok)
	require.Equal(t, "hhw9sKf9G/EKKKH2cE8Dk54l8Xw=", sig)
	f.Ext = append(f.Ext, codec.KV{Key: KeySignature, Value: sig}) // not part of its own content
	again, _ := Sign(f, "12345678")
	require.Equal(t, sig, again)
}

// goClientSign is the official Go client's ACLInterceptor
// (rocketmq-client-go/v2 internal/remote/interceptor.go), rebuilt from
// its source: AccessKey and every extFields key sorted with
// strings.Compare, values concatenated, the body appended. Its quirk: a
// SecurityToken is put in the map but not in the sorted key list, so it
// is not signed, while Java's server (and we) sign every key.
func goClientSign(ext map[string]string, body []byte, ak, sk, token string) map[string]string {
	m := map[string]string{"AccessKey": ak}
	order := []string{"AccessKey"}
	if token != "" {
		m["SecurityToken"] = token
	}
	for k, v := range ext {
		m[k] = v
		order = append(order, k)
	}
	sort.Slice(order, func(i, j int) bool { return strings.Compare(order[i], order[j]) < 0 })
	content := ""
	for _, k := range order {
		content += m[k]
	}
	mac := hmac.New(sha1.New, []byte(sk))
	mac.Write(append([]byte(content), body...))
	out := map[string]string{}
	for k, v := range ext {
		out[k] = v
	}
	out["Signature"] = base64.StdEncoding.EncodeToString(mac.Sum(nil))
	out["AccessKey"] = ak
	if token != "" {
		out["SecurityToken"] = token
	}
	return out
}

func frameOf(ext map[string]string, body []byte) *codec.Frame {
	f := &codec.Frame{Code: 10, Version: 479, Body: body}
	for k, v := range ext {
		f.Ext = append(f.Ext, codec.KV{Key: k, Value: v})
	}
	return f
}

func TestSignMatchesGoClient(t *testing.T) {
	ext := map[string]string{"a": "TopicTest", "b": "PG", "c": "4", "d": "1", "e": "0", "f": "0", "g": "1700000000000",
		"h": "0", "i": "UNIQ_KEY\x01ABC\x02WAIT\x01true\x02", "j": "0", "k": "false", "l": "0", "m": "false", "n": "broker-a"}
	body := []byte("a message body")
	signed := goClientSign(ext, body, "rocketmq2", "12345678", "")
	f := frameOf(signed, body)
	s := newSigner()
	require.True(t, s.verify(f, "12345678", nil, signed["Signature"]))
	require.False(t, s.verify(f, "12345679", nil, signed["Signature"]))
	f.Body[0] ^= 1
	require.False(t, s.verify(f, "12345678", nil, signed["Signature"]))

	// The SecurityToken quirk: the Go client leaves the token out of what
	// it signs; Java's server signs it, and so do we, so such a client is
	// refused by both.
	withToken := goClientSign(ext, []byte("x"), "rocketmq2", "12345678", "tok")
	require.False(t, s.verify(frameOf(withToken, []byte("x")), "12345678", nil, withToken["Signature"]))
}

func TestSignFieldRules(t *testing.T) {
	const sk = "secret-key"
	ref := func(content string) string {
		mac := hmac.New(sha1.New, []byte(sk))
		mac.Write([]byte(content))
		return base64.StdEncoding.EncodeToString(mac.Sum(nil))
	}
	// Java String order is by UTF-16 unit: U+FF21 (one unit 0xFF21) sorts
	// after U+1F600 (units 0xD83D 0xDE00), although its UTF-8 bytes sort
	// before.
	f := frame("", "\uFF21", "wide", "\U0001F600", "emoji", "A", "ascii")
	sig, _ := Sign(f, sk)
	require.Equal(t, ref("ascii"+"emoji"+"wide"), sig)

	// A repeated key counts once, with its last value (Java's HashMap).
	f = frame("", "k", "first", "j", "J", "k", "last")
	sig, _ = Sign(f, sk)
	require.Equal(t, ref("J"+"last"), sig)

	// Clients at or below V4_9_3 do not sign _UNIQUE_KEY_QUERY.
	f = frame("", "topic", "t", "_UNIQUE_KEY_QUERY", "true")
	f.Version = 399
	sig, _ = Sign(f, sk)
	require.Equal(t, ref("t"), sig)
	f.Version = 400
	sig, _ = Sign(f, sk)
	require.Equal(t, ref("true"+"t"), sig)

	// A key longer than the SHA-1 block is hashed first (RFC 2104).
	long := strings.Repeat("k", 100)
	f = frame("body", "x", "1")
	sig, _ = Sign(f, long)
	mac := hmac.New(sha1.New, []byte(long))
	mac.Write([]byte("1body"))
	require.Equal(t, base64.StdEncoding.EncodeToString(mac.Sum(nil)), sig)

	// Too many fields are refused without hashing.
	f = frame("")
	for i := 0; i <= maxSignedFields; i++ {
		f.Ext = append(f.Ext, codec.KV{Key: "k" + strings.Repeat("x", i%7), Value: "v"})
	}
	_, ok := Sign(f, sk)
	require.False(t, ok)
}

func TestJavaCompare(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int // sign
	}{
		{"AccessKey", "a", -1}, {"a", "AccessKey", 1}, {"abc", "abc", 0}, {"ab", "abc", -1},
		{"\uFF21", "\U0001F600", 1}, {"\U0001F600", "\U0001F601", -1}, {"é", "z", 1}, {"aé", "aè", 1},
	} {
		got := javaCompare(c.a, c.b)
		switch {
		case c.want < 0:
			require.Less(t, got, 0, "%q < %q", c.a, c.b)
		case c.want > 0:
			require.Greater(t, got, 0, "%q > %q", c.a, c.b)
		default:
			require.Zero(t, got)
		}
	}
}

func signedSend(t testing.TB, ak, sk string) *codec.Frame {
	f := frame("hello world", "AccessKey", ak, "a", "TopicTest", "b", "PG", "c", "4", "d", "1", "e", "0", "f", "0",
		"g", "1700000000000", "h", "0", "i", "UNIQ_KEY\x01ABC\x02", "j", "0", "k", "false", "l", "0", "m", "false", "n", "broker-a")
	f.Code = int32(codec.ReqSendMessageV2)
	sig, ok := Sign(f, sk)
	require.True(t, ok)
	f.Ext = append(f.Ext, codec.KV{Key: KeySignature, Value: sig})
	return f
}

func TestAuthenticate(t *testing.T) {
	s := openTest(t, Config{AuthenticationEnabled: true, AuthenticationWhitelist: "34, 105"})
	require.NoError(t, s.CreateUser(User{Username: "alice", Password: "alice-secret"}))
	require.NoError(t, s.CreateUser(User{Username: "bob", Password: "bob-secret", Status: UserDisabled}))

	user, remark, ok := s.Authenticate(signedSend(t, "alice", "alice-secret"))
	require.True(t, ok, remark)
	require.Equal(t, "alice", user)

	for _, c := range []struct {
		req    *codec.Frame
		remark string
	}{
		{signedSend(t, "alice", "wrong"), "check signature failed."},
		{signedSend(t, "carol", "x"), "User:carol is not found."},
		{signedSend(t, "bob", "bob-secret"), "User:bob is disabled."},
		{frame("", "a", "TopicTest"), "username cannot be null."},
		{frame(""), "username cannot be null."},
		{frame("", "AccessKey", "alice"), "check signature failed."}, // no Signature
		{frame("", "AccessKey", "alice", "Signature", strings.Repeat("A", 1<<20)), "check signature failed."},
	} {
		user, remark, ok := s.Authenticate(c.req)
		require.False(t, ok)
		require.Empty(t, user)
		require.Equal(t, c.remark, remark)
	}
	// A huge AccessKey is cut in the answer and never looked up.
	_, remark, ok = s.Authenticate(frame("", "AccessKey", strings.Repeat("z", 1<<20)))
	require.False(t, ok)
	require.Less(t, len(remark), 100)

	// Whitelisted codes (HEART_BEAT 34, GET_ROUTEINFO_BY_TOPIC 105) pass with no user.
	hb := frame("", "AccessKey", "nobody")
	hb.Code = 34
	user, _, ok = s.Authenticate(hb)
	require.True(t, ok)
	require.Empty(t, user)

	off := openTest(t, Config{})
	user, _, ok = off.Authenticate(frame(""))
	require.True(t, ok)
	require.Empty(t, user)
}

func TestAuthenticateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	s := openTest(t, Config{AuthenticationEnabled: true})
	require.NoError(t, s.CreateUser(User{Username: "alice", Password: "alice-secret"}))
	req := signedSend(t, "alice", "alice-secret")
	allocs := testing.AllocsPerRun(200, func() {
		if _, r, ok := s.Authenticate(req); !ok {
			panic(r)
		}
	})
	require.Zero(t, allocs)
}

func BenchmarkAuthenticate(b *testing.B) {
	s := openTest(b, Config{AuthenticationEnabled: true})
	require.NoError(b, s.CreateUser(User{Username: "alice", Password: "alice-secret"}))
	req := signedSend(b, "alice", "alice-secret")
	b.SetBytes(int64(len(req.Body)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, r, ok := s.Authenticate(req); !ok {
				b.Fatal(r)
			}
		}
	})
}
