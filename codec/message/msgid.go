package message

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// ErrMsgID is returned for malformed message ids.
var ErrMsgID = errors.New("message: malformed message id")

const hexUpper = "0123456789ABCDEF"

func appendHexUpper(dst, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, hexUpper[c>>4], hexUpper[c&0xF])
	}
	return dst
}

// AppendOffsetMsgID appends the offset message id (store host ‖ port ‖
// commit-log offset, upper-case hex: 32 chars IPv4, 56 IPv6).
func AppendOffsetMsgID(dst []byte, storeHost netip.AddrPort, phyOffset int64) []byte {
	var b [28]byte
	n := putHost(b[:], storeHost)
	binary.BigEndian.PutUint64(b[n:], uint64(phyOffset))
	return appendHexUpper(dst, b[:n+8])
}

// OffsetMsgID returns the offset message id as a string.
func OffsetMsgID(storeHost netip.AddrPort, phyOffset int64) string {
	var b [56]byte
	return string(AppendOffsetMsgID(b[:0], storeHost, phyOffset))
}

// DecodeOffsetMsgID parses an offset message id (32 hex chars IPv4, 56
// IPv6; upper or lower case).
func DecodeOffsetMsgID(id string) (netip.AddrPort, int64, error) {
	var b [28]byte
	if len(id) != 32 && len(id) != 56 {
		return netip.AddrPort{}, 0, fmt.Errorf("%w: length %d", ErrMsgID, len(id))
	}
	n, err := hex.Decode(b[:], []byte(id))
	if err != nil {
		return netip.AddrPort{}, 0, fmt.Errorf("%w: %v", ErrMsgID, err)
	}
	host := getHost(b[:], n == 28)
	return host, int64(binary.BigEndian.Uint64(b[n-8:])), nil
}

// UniqKey is a decoded client message id (Java MessageClientIDSetter layout:
// ip ‖ pid int16 ‖ class-loader hash int32 ‖ ms since month start int32 ‖
// counter int16).
type UniqKey struct {
	IP      netip.Addr
	Pid     int16
	Hash    int32
	Millis  int32 // since the start of the month (client time zone)
	Counter int16
}

// ParseUniqKey decodes a UNIQ_KEY (32 hex chars for IPv4, 56 for IPv6).
func ParseUniqKey(id string) (UniqKey, error) {
	var b [28]byte
	if len(id) != 32 && len(id) != 56 {
		return UniqKey{}, fmt.Errorf("%w: length %d", ErrMsgID, len(id))
	}
	n, err := hex.Decode(b[:], []byte(id))
	if err != nil {
		return UniqKey{}, fmt.Errorf("%w: %v", ErrMsgID, err)
	}
	ipLen := n - 12
	var k UniqKey
	if ipLen == 16 {
		k.IP = netip.AddrFrom16([16]byte(b[:16]))
	} else {
		k.IP = netip.AddrFrom4([4]byte(b[:4]))
	}
	be := binary.BigEndian
	k.Pid = int16(be.Uint16(b[ipLen:]))
	k.Hash = int32(be.Uint32(b[ipLen+2:]))
	k.Millis = int32(be.Uint32(b[ipLen+6:]))
	k.Counter = int16(be.Uint16(b[ipLen+10:]))
	return k, nil
}

// Time returns the approximate creation time of k, assuming it was made in
// the month of now (location loc), as Java's getNearlyTimeFromID does.
func (k UniqKey) Time(now time.Time, loc *time.Location) time.Time {
	n := now.In(loc)
	start := time.Date(n.Year(), n.Month(), 1, 0, 0, 0, 0, loc)
	t := start.Add(time.Duration(k.Millis) * time.Millisecond)
	if t.After(n) {
		start = start.AddDate(0, -1, 0)
		t = start.Add(time.Duration(k.Millis) * time.Millisecond)
	}
	return t
}

// UniqIDGen creates Java-style UNIQ_KEYs for messages that arrive without
// one. Not safe for concurrent use; give each goroutine its own or guard it.
type UniqIDGen struct {
	prefix     []byte // upper-case hex of ip ‖ pid ‖ hash
	monthStart time.Time
	nextMonth  time.Time
	counter    int16
	loc        *time.Location
}

// NewUniqIDGen returns a generator for ip and pid.
func NewUniqIDGen(ip netip.Addr, pid int, hash int32, loc *time.Location) *UniqIDGen {
	var b [22]byte
	n := 0
	if ip.Is4() || ip.Is4In6() || !ip.IsValid() {
		var a [4]byte
		if ip.IsValid() {
			a = ip.Unmap().As4()
		}
		n = copy(b[:], a[:])
	} else {
		a := ip.As16()
		n = copy(b[:], a[:])
	}
	binary.BigEndian.PutUint16(b[n:], uint16(pid))
	binary.BigEndian.PutUint32(b[n+2:], uint32(hash))
	if loc == nil {
		loc = time.Local
	}
	return &UniqIDGen{prefix: appendHexUpper(nil, b[:n+6]), loc: loc}
}

// Append appends a new id for time now.
func (g *UniqIDGen) Append(dst []byte, now time.Time) []byte {
	if !now.Before(g.nextMonth) || now.Before(g.monthStart) {
		n := now.In(g.loc)
		g.monthStart = time.Date(n.Year(), n.Month(), 1, 0, 0, 0, 0, g.loc)
		g.nextMonth = g.monthStart.AddDate(0, 1, 0)
	}
	var b [6]byte
	binary.BigEndian.PutUint32(b[:], uint32(now.Sub(g.monthStart).Milliseconds()))
	binary.BigEndian.PutUint16(b[4:], uint16(g.counter))
	g.counter++
	dst = append(dst, g.prefix...)
	return appendHexUpper(dst, b[:])
}
