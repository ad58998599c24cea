package auth

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// The prefix sort orders keys exactly as a stable sort by javaCompare,
// for keys that share prefixes, run past 8 bytes, hold NULs, non-ASCII,
// supplementary characters and U+E000..U+FFFF (where UTF-16 order is not
// byte order), and repeat.
func TestSortFieldsMatchesJavaOrder(t *testing.T) {
	alphabet := []string{"_UNIQUE_KEY_QUERY", "Signature", "a", "b", "A", "Z", "_", "\x00", "é", "\uFF21", "\uE000", "\U0001F600", "\U0001F601", "abcdefgh", "abcdefg"}
	rng := rand.New(rand.NewPCG(1, 2))
	s := newSigner()
	var prev *codec.Frame
	for round := range 3000 {
		f := &codec.Frame{Version: int32(398 + rng.IntN(3))} // both sides of the V4_9_3 rule
		for range 1 + rng.IntN(24) {
			var b strings.Builder
			for range rng.IntN(5) {
				b.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			f.Ext = append(f.Ext, codec.KV{Key: b.String(), Value: "v"})
		}
		f.Code = int32(rng.IntN(20)) // codes share cache slots
		if round%3 == 1 {
			// The same key set in another order: the cached order must not be used.
			rng.Shuffle(len(prev.Ext), func(i, j int) { prev.Ext[i], prev.Ext[j] = prev.Ext[j], prev.Ext[i] })
			f = prev
		}
		for pass := range 2 { // a fresh sort, then (most often) the cached one
			s.sortFields(f)
			want := []int32{}
			for i, kv := range f.Ext {
				if kv.Key != KeySignature && (f.Version > versionV4_9_3 || kv.Key != keyUniqueQuery) {
					want = append(want, int32(i))
				}
			}
			sort.SliceStable(want, func(i, j int) bool { return javaCompare(f.Ext[want[i]].Key, f.Ext[want[j]].Key) < 0 })
			got := make([]int32, len(s.order))
			for i, e := range s.order {
				got[i] = e.at
			}
			require.Equal(t, want, got, "round %d pass %d: keys %q", round, pass, f.Ext)
		}
		prev = f
	}
}

// A cached order is used only for the very same keys: a request whose
// keys alias a reused buffer (as decoded frames do) that now holds other
// keys of the same length is sorted anew.
func TestSortFieldsCacheOwnsItsKeys(t *testing.T) {
	buf := []byte("bca")
	f := &codec.Frame{Code: 310, Version: 479}
	for i := range buf {
		f.Ext = append(f.Ext, codec.KV{Key: unsafe.String(&buf[i], 1), Value: "v"})
	}
	s := newSigner()
	s.sortFields(f)
	require.Equal(t, []int32{2, 0, 1}, ats(s.order)) // a b c
	copy(buf, "abc")
	s.sortFields(f)
	require.Equal(t, []int32{0, 1, 2}, ats(s.order))
}

func ats(o []sortKey) []int32 {
	out := make([]int32, len(o))
	for i, e := range o {
		out[i] = e.at
	}
	return out
}

// keyPrefix agrees with javaCompare wherever two prefixes differ.
func TestKeyPrefixAgreesWithJavaCompare(t *testing.T) {
	keys := []string{"", "a", "ab", "a\x00", "a\x00b", "abcdefgh", "abcdefghi", "abcdefgi", "é", "aé", "a\uE000",
		"a\U0001F600", "\uFFFF", "\U0001F600", "AccessKey", "Signature", "topic", "z", "\x7f", "\u0080"}
	for _, a := range keys {
		for _, b := range keys {
			pa, pb := keyPrefix(a), keyPrefix(b)
			if pa == pb {
				continue
			}
			require.Equal(t, pa < pb, javaCompare(a, b) < 0, "%q vs %q", a, b)
		}
	}
}

// The per-user keyed states give the same signature as keying each time,
// for short, block-long and longer-than-a-block secrets.
func TestKeyedStatesSignAsHMAC(t *testing.T) {
	for _, secret := range []string{"k", "12345678", strings.Repeat("s", sha1.BlockSize), strings.Repeat("L", 3*sha1.BlockSize+5)} {
		f := frame("the body", "topic", "T", "AccessKey", "ak", "b", "x")
		mac := hmac.New(sha1.New, []byte(secret))
		mac.Write([]byte("akxTthe body")) // AccessKey, b, topic, then the body
		want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
		mk := newMacKey(secret)
		require.NotNil(t, mk)
		s := newSigner()
		require.True(t, s.verify(f, secret, mk, want), "keyed, %d-byte secret", len(secret))
		require.True(t, s.verify(f, secret, nil, want), "unkeyed, %d-byte secret", len(secret))
		require.False(t, s.verify(f, secret+"x", newMacKey(secret+"x"), want))
	}
}

// A changed password takes effect at once: the keyed states follow it.
func TestPasswordChangeRekeys(t *testing.T) {
	s := openTest(t, Config{AuthenticationEnabled: true})
	require.NoError(t, s.CreateUser(User{Username: "alice", Password: "first"}))
	_, remark, ok := s.Authenticate(signedSend(t, "alice", "first"))
	require.True(t, ok, remark)
	require.NoError(t, s.UpdateUser(User{Username: "alice", Password: "second"}))
	_, _, ok = s.Authenticate(signedSend(t, "alice", "first"))
	require.False(t, ok)
	_, remark, ok = s.Authenticate(signedSend(t, "alice", "second"))
	require.True(t, ok, remark)
	require.NoError(t, s.UpdateUser(User{Username: "alice", Status: UserEnabled})) // password kept
	_, remark, ok = s.Authenticate(signedSend(t, "alice", "second"))
	require.True(t, ok, remark)
	u, found, err := s.GetUser("alice")
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, User{Username: "alice", Password: "second", Type: UserNormal, Status: UserEnabled}, u)
}

// Values longer than the gathering buffer, and runs that overflow it, are
// signed as the reference HMAC signs them.
func TestSignLongValues(t *testing.T) {
	vals := []string{strings.Repeat("a", 900), strings.Repeat("b", 300), strings.Repeat("c", 2000), "d", strings.Repeat("e", valuesCap)}
	f := frame("body")
	var content string
	for i, v := range vals {
		f.Ext = append(f.Ext, codec.KV{Key: "k" + string(rune('0'+i)), Value: v})
		content += v
	}
	mac := hmac.New(sha1.New, []byte("sk"))
	mac.Write([]byte(content + "body"))
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	got, ok := Sign(f, "sk")
	require.True(t, ok)
	require.Equal(t, want, got)
	s := newSigner()
	require.True(t, s.verify(f, "sk", newMacKey("sk"), want))
	require.True(t, s.verify(f, "sk", newMacKey("sk"), want), "again, from the cached order")
}
