package auth

import (
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"hash"
	"unicode/utf8"
	"unsafe"

	"github.com/rocketgo/rocketgo/codec"
)

// Keys of the signed request (Java's SessionCredentials).
const (
	KeyAccessKey     = "AccessKey"
	KeySignature     = "Signature"
	KeySecurityToken = "SecurityToken"
	// keyUniqueQuery is left out of the signed content of requests from
	// clients at or below V4_9_3 (Java's MixAll.UNIQUE_MSG_QUERY_FLAG).
	keyUniqueQuery = "_UNIQUE_KEY_QUERY"
	versionV4_9_3  = 399
)

// Bounds on what Authenticate looks at. Anything beyond them fails before
// any hashing or lookup.
const (
	// MaxUsernameLen bounds user names (AccessKey); longer ones can
	// neither be created nor sent.
	MaxUsernameLen = 1024
	// maxSignedFields bounds the extFields of a signed request (Java has
	// no bound; real requests have under 40).
	maxSignedFields = 256
	// signatureLen is the length of a base64 HMAC-SHA1 (20 bytes).
	signatureLen = 28
)

// signer holds the scratch of one signature check; a Service pools them
// so that a check allocates nothing.
type signer struct {
	inner, outer hash.Hash
	order        []int32 // indices into Ext, sorted by key
	pad          [sha1.BlockSize]byte
	sum          [sha1.Size]byte
	longKey      [sha1.Size]byte // the hash of a key longer than a block
	b64          [signatureLen]byte
}

func newSigner() *signer {
	return &signer{inner: sha1.New(), outer: sha1.New(), order: make([]int32, 0, 32)}
}

// Sign computes the signature a Java client (AclClientRPCHook) puts in
// req's Signature key for secretKey: base64(HMAC-SHA1(secretKey, content))
// where content is the values of every extFields key but Signature,
// sorted by key in Java String order, then the body. ok is false when req
// has more extFields than we sign.
func Sign(req *codec.Frame, secretKey string) (sig string, ok bool) {
	s := newSigner()
	if !s.compute(req, secretKey) {
		return "", false
	}
	return string(s.b64[:]), true
}

// verify reports whether sig is req's signature under secretKey, in
// constant time over the signature bytes.
func (s *signer) verify(req *codec.Frame, secretKey, sig string) bool {
	if len(sig) != signatureLen || !s.compute(req, secretKey) {
		return false
	}
	return subtle.ConstantTimeCompare(s.b64[:], bytesOf(sig)) == 1
}

// compute fills s.b64 with req's signature.
func (s *signer) compute(req *codec.Frame, secretKey string) bool {
	if len(req.Ext) > maxSignedFields {
		return false
	}
	s.sortFields(req)

	// HMAC (RFC 2104) by hand: crypto/hmac allocates a new state per key.
	key := bytesOf(secretKey)
	if len(key) > sha1.BlockSize {
		s.inner.Reset()
		s.inner.Write(key)
		key = s.inner.Sum(s.longKey[:0])
	}
	s.keyPad(key, 0x36)
	s.inner.Reset()
	s.inner.Write(s.pad[:])
	for i, at := range s.order {
		kv := &req.Ext[at]
		// Java's map keeps the last of repeated keys (stable sort: the
		// last of a run of equal keys is the last one sent).
		if i+1 < len(s.order) && req.Ext[s.order[i+1]].Key == kv.Key {
			continue
		}
		s.inner.Write(bytesOf(kv.Value))
	}
	s.inner.Write(req.Body)
	inner := s.inner.Sum(s.sum[:0])

	s.keyPad(key, 0x5c)
	s.outer.Reset()
	s.outer.Write(s.pad[:])
	s.outer.Write(inner)
	base64.StdEncoding.Encode(s.b64[:], s.outer.Sum(s.sum[:0]))
	return true
}

func (s *signer) keyPad(key []byte, x byte) {
	n := copy(s.pad[:], key)
	for i := range n {
		s.pad[i] ^= x
	}
	for i := n; i < len(s.pad); i++ {
		s.pad[i] = x
	}
}

// sortFields fills s.order with the indices of the signed keys of req,
// sorted stably by key in Java String order (a binary insertion sort:
// few keys, no allocation).
func (s *signer) sortFields(req *codec.Frame) {
	s.order = s.order[:0]
	old := req.Version <= versionV4_9_3
	for i := range req.Ext {
		k := req.Ext[i].Key
		if k == KeySignature || (old && k == keyUniqueQuery) {
			continue
		}
		lo, hi := 0, len(s.order)
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if javaCompare(k, req.Ext[s.order[mid]].Key) < 0 {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		s.order = append(s.order, 0)
		copy(s.order[lo+1:], s.order[lo:])
		s.order[lo] = int32(i)
	}
}

// javaCompare orders strings as Java's String.compareTo: by UTF-16 code
// units. That is byte order except between supplementary characters and
// those from U+E000 to U+FFFF.
func javaCompare(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		return len(a) - len(b) // one is a prefix of the other
	}
	if a[i] < utf8.RuneSelf && b[i] < utf8.RuneSelf {
		return int(a[i]) - int(b[i])
	}
	// Back up to the start of the runes that differ.
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRuneInString(a[i:])
	rb, _ := utf8.DecodeRuneInString(b[i:])
	if ua, ub := firstUnit(ra), firstUnit(rb); ua != ub {
		return int(ua) - int(ub)
	}
	return int(ra) - int(rb) // same high surrogate: the low one decides

}

// firstUnit is the first UTF-16 code unit of r.
func firstUnit(r rune) rune {
	if r >= 0x10000 {
		return 0xD800 + (r-0x10000)>>10
	}
	return r
}

// bytesOf views s as bytes without copying; the hash only reads them.
func bytesOf(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
