package auth

import (
	"crypto/sha1"
	"crypto/subtle"
	"encoding"
	"encoding/base64"
	"encoding/binary"
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
	inner, outer   hash.Hash
	innerU, outerU encoding.BinaryUnmarshaler // the same digests, to load a keyed state
	order          []sortKey                  // the signed keys of Ext, sorted
	orders         [orderCacheSize]orderCache // the last sorts, by request code
	values         []byte                     // the signed values gathered, at most valuesCap
	pad            [sha1.BlockSize]byte
	sum            [sha1.Size]byte
	longKey        [sha1.Size]byte // the hash of a key longer than a block
	b64            [signatureLen]byte
}

// sortKey is one extFields entry while sorting: its index and the order
// prefix of its key (keyPrefix).
type sortKey struct {
	prefix uint64
	at     int32
}

// valuesCap is the size of a signer's buffer of signed values (a send's
// take ~150 bytes; longer runs are hashed as they come).
const valuesCap = 1024

// orderCacheSize is how many request codes a signer remembers the key
// order of (direct-mapped on the code's low bits).
const orderCacheSize = 8

// orderCache is the outcome of one sort: a request with exactly these
// keys in this order (and the same code and version rule) sorts to order.
// Clients send a request code's keys the same way each time (Java's
// HashMap iterates one key set in one order; templates do too), so most
// requests skip the sort. keys view arena, which the entry owns.
type orderCache struct {
	code  int32
	old   bool
	keys  []string
	order []sortKey
	arena []byte
}

func newSigner() *signer {
	s := &signer{inner: sha1.New(), outer: sha1.New(), order: make([]sortKey, 0, 32), values: make([]byte, 0, valuesCap)}
	s.innerU, _ = s.inner.(encoding.BinaryUnmarshaler)
	s.outerU, _ = s.outer.(encoding.BinaryUnmarshaler)
	return s
}

// macKey is one secret key's HMAC-SHA1 states after the inner and the
// outer key pad (RFC 2104's first block of each hash), kept per user so
// that a check neither re-keys nor hashes the pads again. The states are
// crypto/sha1's marshalled digests.
type macKey struct {
	secret       string
	inner, outer []byte
}

// newMacKey computes the keyed states of secret (nil if crypto/sha1
// cannot marshal its state: checks then key each time).
func newMacKey(secret string) *macKey {
	s := newSigner()
	key := s.hmacKey(secret)
	m := &macKey{secret: secret}
	for _, st := range []struct {
		h   hash.Hash
		x   byte
		out *[]byte
	}{{s.inner, 0x36, &m.inner}, {s.outer, 0x5c, &m.outer}} {
		s.keyPad(key, st.x)
		st.h.Reset()
		st.h.Write(s.pad[:])
		b, ok := st.h.(encoding.BinaryMarshaler)
		if !ok || s.innerU == nil || s.outerU == nil {
			return nil
		}
		v, err := b.MarshalBinary()
		if err != nil {
			return nil
		}
		*st.out = v
	}
	return m
}

// Sign computes the signature a Java client (AclClientRPCHook) puts in
// req's Signature key for secretKey: base64(HMAC-SHA1(secretKey, content))
// where content is the values of every extFields key but Signature,
// sorted by key in Java String order, then the body. ok is false when req
// has more extFields than we sign.
func Sign(req *codec.Frame, secretKey string) (sig string, ok bool) {
	s := newSigner()
	if !s.compute(req, secretKey, nil) {
		return "", false
	}
	return string(s.b64[:]), true
}

// verify reports whether sig is req's signature under secretKey, in
// constant time over the signature bytes. mk, when not nil, holds the
// keyed states of secretKey.
func (s *signer) verify(req *codec.Frame, secretKey string, mk *macKey, sig string) bool {
	if len(sig) != signatureLen || !s.compute(req, secretKey, mk) {
		return false
	}
	return subtle.ConstantTimeCompare(s.b64[:], bytesOf(sig)) == 1
}

// hmacKey is RFC 2104's K: the secret, hashed when longer than a block.
func (s *signer) hmacKey(secretKey string) []byte {
	key := bytesOf(secretKey)
	if len(key) > sha1.BlockSize {
		s.inner.Reset()
		s.inner.Write(key)
		key = s.inner.Sum(s.longKey[:0])
	}
	return key
}

// compute fills s.b64 with req's signature under secretKey, starting from
// the keyed states of mk when given (they must be secretKey's).
func (s *signer) compute(req *codec.Frame, secretKey string, mk *macKey) bool {
	if len(req.Ext) > maxSignedFields {
		return false
	}
	s.sortFields(req)

	// HMAC (RFC 2104) by hand: crypto/hmac allocates a new state per key.
	var key []byte
	if mk == nil || s.innerU.UnmarshalBinary(mk.inner) != nil {
		key = s.hmacKey(secretKey)
		s.keyPad(key, 0x36)
		s.inner.Reset()
		s.inner.Write(s.pad[:])
		mk = nil
	}
	// The values go to the hash gathered in s.values: one Write instead
	// of one per field (each Write has a fixed cost that small values do
	// not amortize).
	s.values = s.values[:0]
	for i := range s.order {
		kv := &req.Ext[s.order[i].at]
		// Java's map keeps the last of repeated keys (stable sort: the
		// last of a run of equal keys is the last one sent).
		if i+1 < len(s.order) && req.Ext[s.order[i+1].at].Key == kv.Key {
			continue
		}
		if len(s.values)+len(kv.Value) > cap(s.values) {
			s.inner.Write(s.values)
			s.values = s.values[:0]
			if len(kv.Value) > cap(s.values) {
				s.inner.Write(bytesOf(kv.Value))
				continue
			}
		}
		s.values = append(s.values, kv.Value...)
	}
	s.inner.Write(s.values)
	s.inner.Write(req.Body)
	inner := s.inner.Sum(s.sum[:0])

	if mk == nil || s.outerU.UnmarshalBinary(mk.outer) != nil {
		if key == nil {
			key = s.hmacKey(secretKey)
		}
		s.keyPad(key, 0x5c)
		s.outer.Reset()
		s.outer.Write(s.pad[:])
	}
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

// sortFields fills s.order with the signed keys of req, sorted stably by
// key in Java String order: an insertion sort (few keys, no allocation)
// on each key's order prefix, the whole keys compared only when two
// prefixes are equal.
func (s *signer) sortFields(req *codec.Frame) {
	old := req.Version <= versionV4_9_3
	c := &s.orders[uint32(req.Code)%orderCacheSize]
	if c.code == req.Code && c.old == old && len(c.keys) == len(req.Ext) && c.keys != nil {
		hit := true
		for i := range c.keys {
			if c.keys[i] != req.Ext[i].Key {
				hit = false
				break
			}
		}
		if hit {
			s.order = append(s.order[:0], c.order...)
			return
		}
	}
	s.order = s.order[:0]
	for i := range req.Ext {
		k := req.Ext[i].Key
		if k == KeySignature || (old && k == keyUniqueQuery) {
			continue
		}
		e := sortKey{prefix: keyPrefix(k), at: int32(i)}
		j := len(s.order)
		s.order = append(s.order, e)
		for j > 0 && keyLess(req, e, s.order[j-1]) {
			s.order[j] = s.order[j-1]
			j--
		}
		s.order[j] = e
	}
	c.remember(req, old, s.order)
}

// maxCachedKeyBytes bounds the key bytes an orderCache entry keeps.
const maxCachedKeyBytes = 2048

// remember makes c the entry of req's keys and their sorted order,
// reusing c's memory (a request with more key bytes than we keep is not
// remembered).
func (c *orderCache) remember(req *codec.Frame, old bool, order []sortKey) {
	n := 0
	for i := range req.Ext {
		n += len(req.Ext[i].Key)
	}
	if n > maxCachedKeyBytes {
		c.keys = nil
		return
	}
	c.code, c.old = req.Code, old
	c.arena = c.arena[:0]
	for i := range req.Ext {
		c.arena = append(c.arena, req.Ext[i].Key...)
	}
	// The views are made after the last append: the arena does not move.
	c.keys, n = c.keys[:0], 0
	for i := range req.Ext {
		l := len(req.Ext[i].Key)
		c.keys = append(c.keys, unsafe.String(unsafe.SliceData(c.arena[n:]), l))
		n += l
	}
	c.order = append(c.order[:0], order...)
}

// keyLess orders two entries by key (Java String order); equal keys keep
// the order they came in (a comes after b: it is not less).
func keyLess(req *codec.Frame, a, b sortKey) bool {
	if a.prefix != b.prefix {
		return a.prefix < b.prefix
	}
	return javaCompare(req.Ext[a.at].Key, req.Ext[b.at].Key) < 0
}

// keyPrefix maps the first 8 bytes of k to an integer whose order agrees
// with javaCompare wherever two prefixes differ: ASCII bytes as they are,
// 0 past the end (a prefix sorts first), and 0xFF from the first
// non-ASCII byte on (any non-ASCII character sorts after every ASCII one;
// among themselves the whole keys decide, UTF-16 order not being byte
// order).
func keyPrefix(k string) uint64 {
	if len(k) >= 8 {
		if v := binary.BigEndian.Uint64(bytesOf(k[:8])); v&0x8080808080808080 == 0 {
			return v
		}
	}
	var v uint64
	for i := range 8 {
		var b uint64
		if i < len(k) {
			if k[i] >= utf8.RuneSelf {
				rest := uint(8 * (8 - i))
				return v<<rest | (1<<rest - 1) // 0xFF from here on
			}
			b = uint64(k[i])
		}
		v = v<<8 | b
	}
	return v
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
