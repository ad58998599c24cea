package message

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net/netip"
	"unsafe"
)

// Magic codes (Java MessageDecoder / MessageVersion / CommitLog).
const (
	MagicV1    int32 = -626843481 // 0xDAA320A7, 1-byte topic length
	MagicV2    int32 = -626843477 // 0xDAA320AB, 2-byte topic length
	BlankMagic int32 = -875286124 // 0xCBD43194, end-of-segment marker
)

// Fixed positions in a record (independent of host sizes).
const (
	PosTotalSize      = 0
	PosMagic          = 4
	PosBodyCRC        = 8
	PosQueueID        = 12
	PosFlag           = 16
	PosQueueOffset    = 20
	PosPhysicalOffset = 28
	PosSysFlag        = 36
	PosBornTimestamp  = 40
	PosBornHost       = 48
	// BlankLen is the size of the end-of-segment marker.
	BlankLen = 8
	// maxTopicV1 is the longest topic a V1 record can carry (signed byte).
	maxTopicV1 = 127
)

// Decode errors; each means the bytes are not a valid record.
var (
	ErrTruncated = errors.New("message: record truncated")
	ErrMagic     = errors.New("message: bad magic code")
	ErrSize      = errors.New("message: record size mismatch")
	ErrCRC       = errors.New("message: body crc mismatch")
	ErrBlank     = errors.New("message: end-of-segment blank record")
	ErrTooLarge  = errors.New("message: field too large")
)

// Message is what the broker hands the store to append (Java
// MessageExtBrokerInner). Properties is already encoded.
type Message struct {
	Topic                     string
	QueueID                   int32
	Flag                      int32
	Body                      []byte
	Properties                string
	BornTimestamp             int64
	BornHost                  netip.AddrPort
	StoreHost                 netip.AddrPort
	SysFlag                   int32
	ReconsumeTimes            int32
	PreparedTransactionOffset int64
	// TagsCode is informational: the store computes consume-queue tags
	// codes from the record (store.Config.TagsCode) so recovery can
	// recompute them.
	TagsCode int64
	// StoreTimestamp is set by the store when it appends.
	StoreTimestamp int64
}

func hostLen(a netip.AddrPort) int {
	if is6(a) {
		return 20
	}
	return 8
}

func is6(a netip.AddrPort) bool {
	ad := a.Addr()
	return ad.Is6() && !ad.Is4In6()
}

// Magic returns the magic code the record of m uses: V2 only for topics
// longer than 127 bytes (Java autoMessageVersionOnTopicLen).
func (m *Message) Magic() int32 {
	if len(m.Topic) > maxTopicV1 {
		return MagicV2
	}
	return MagicV1
}

// RecordSize returns the encoded size of m.
func (m *Message) RecordSize() int {
	tl := 1
	if len(m.Topic) > maxTopicV1 {
		tl = 2
	}
	return 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + hostLen(m.BornHost) + 8 + hostLen(m.StoreHost) +
		4 + 8 + 4 + len(m.Body) + tl + len(m.Topic) + 2 + len(m.Properties)
}

// Validate checks the variable-length fields fit the record format.
func (m *Message) Validate() error {
	if len(m.Topic) == 0 || len(m.Topic) > 32767 {
		return fmt.Errorf("%w: topic length %d", ErrTooLarge, len(m.Topic))
	}
	if len(m.Properties) > MaxPropertiesLen {
		return fmt.Errorf("%w: properties length %d", ErrTooLarge, len(m.Properties))
	}
	return nil
}

// EffectiveSysFlag returns m.SysFlag with the IPv6 host bits set from the
// actual addresses, as Java does.
func (m *Message) EffectiveSysFlag() int32 {
	f := m.SysFlag &^ (BornHostV6Flag | StoreHostV6Flag)
	if is6(m.BornHost) {
		f |= BornHostV6Flag
	}
	if is6(m.StoreHost) {
		f |= StoreHostV6Flag
	}
	return f
}

// BodyCRC is Java's UtilAll.crc32: CRC-32 (IEEE) masked to 31 bits.
func BodyCRC(body []byte) int32 {
	return int32(crc32.ChecksumIEEE(body) & 0x7FFFFFFF)
}

func putHost(b []byte, a netip.AddrPort) int {
	ad := a.Addr()
	if is6(a) {
		s := ad.As16()
		copy(b, s[:])
		binary.BigEndian.PutUint32(b[16:], uint32(a.Port()))
		return 20
	}
	var s [4]byte
	if ad.IsValid() {
		s = ad.Unmap().As4()
	}
	copy(b, s[:])
	binary.BigEndian.PutUint32(b[4:], uint32(a.Port()))
	return 8
}

// PutRecord encodes m into b, which must hold m.RecordSize() bytes, with the
// given body CRC, queue offset and commit-log offset, and returns the size.
// The body is copied exactly once. Call Validate first.
func PutRecord(b []byte, m *Message, bodyCRC int32, queueOffset, phyOffset int64) int {
	size := m.RecordSize()
	_ = b[size-1]
	be := binary.BigEndian
	be.PutUint32(b[0:], uint32(size))
	be.PutUint32(b[4:], uint32(m.Magic()))
	be.PutUint32(b[8:], uint32(bodyCRC))
	be.PutUint32(b[12:], uint32(m.QueueID))
	be.PutUint32(b[16:], uint32(m.Flag))
	be.PutUint64(b[20:], uint64(queueOffset))
	be.PutUint64(b[28:], uint64(phyOffset))
	be.PutUint32(b[36:], uint32(m.EffectiveSysFlag()))
	be.PutUint64(b[40:], uint64(m.BornTimestamp))
	p := 48 + putHost(b[48:], m.BornHost)
	be.PutUint64(b[p:], uint64(m.StoreTimestamp))
	p += 8
	p += putHost(b[p:], m.StoreHost)
	be.PutUint32(b[p:], uint32(m.ReconsumeTimes))
	be.PutUint64(b[p+4:], uint64(m.PreparedTransactionOffset))
	be.PutUint32(b[p+12:], uint32(len(m.Body)))
	p += 16
	p += copy(b[p:], m.Body)
	if len(m.Topic) > maxTopicV1 {
		be.PutUint16(b[p:], uint16(len(m.Topic)))
		p += 2
	} else {
		b[p] = byte(len(m.Topic))
		p++
	}
	p += copy(b[p:], m.Topic)
	be.PutUint16(b[p:], uint16(len(m.Properties)))
	p += 2
	p += copy(b[p:], m.Properties)
	return p
}

// AppendRecord appends the encoded record of m to dst.
func AppendRecord(dst []byte, m *Message, bodyCRC int32, queueOffset, phyOffset int64) []byte {
	n := m.RecordSize()
	if cap(dst)-len(dst) < n {
		nd := make([]byte, len(dst), len(dst)+n)
		copy(nd, dst)
		dst = nd
	}
	PutRecord(dst[len(dst):len(dst)+n], m, bodyCRC, queueOffset, phyOffset)
	return dst[:len(dst)+n]
}

// PutBlank writes the end-of-segment marker for remaining bytes into b.
func PutBlank(b []byte, remaining int32) {
	binary.BigEndian.PutUint32(b[0:], uint32(remaining))
	binary.BigEndian.PutUint32(b[4:], 0xCBD43194)
}

// Ext is a decoded record. Body, Topic and Properties alias the decoded
// bytes and are valid as long as they are.
type Ext struct {
	TotalSize                 int32
	Magic                     int32
	BodyCRC                   int32
	QueueID                   int32
	Flag                      int32
	QueueOffset               int64
	PhysicalOffset            int64
	SysFlag                   int32
	BornTimestamp             int64
	BornHost                  netip.AddrPort
	StoreTimestamp            int64
	StoreHost                 netip.AddrPort
	ReconsumeTimes            int32
	PreparedTransactionOffset int64
	Body                      []byte
	Topic                     string
	Properties                string
}

func getHost(b []byte, v6 bool) netip.AddrPort {
	if v6 {
		return netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[:16])), uint16(binary.BigEndian.Uint32(b[16:])))
	}
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[:4])), uint16(binary.BigEndian.Uint32(b[4:])))
}

func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// PeekSize reads the total size and magic at the start of b.
func PeekSize(b []byte) (size int32, magic int32, err error) {
	if len(b) < 8 {
		return 0, 0, ErrTruncated
	}
	return int32(binary.BigEndian.Uint32(b)), int32(binary.BigEndian.Uint32(b[4:])), nil
}

// Decode decodes the record at the start of b (b may extend past it). It
// validates the magic and that the field lengths add up to TOTALSIZE; it
// returns ErrBlank for an end-of-segment marker. The CRC is checked only by
// CheckCRC.
func Decode(b []byte, e *Ext) error {
	size, magic, err := PeekSize(b)
	if err != nil {
		return err
	}
	if magic == BlankMagic {
		e.TotalSize, e.Magic = size, magic
		return ErrBlank
	}
	if magic != MagicV1 && magic != MagicV2 {
		return ErrMagic
	}
	if size < 4 || int64(size) > int64(len(b)) {
		return ErrTruncated
	}
	r := b[:size]
	be := binary.BigEndian
	if len(r) < 48 {
		return ErrSize
	}
	e.TotalSize, e.Magic = size, magic
	e.BodyCRC = int32(be.Uint32(r[8:]))
	e.QueueID = int32(be.Uint32(r[12:]))
	e.Flag = int32(be.Uint32(r[16:]))
	e.QueueOffset = int64(be.Uint64(r[20:]))
	e.PhysicalOffset = int64(be.Uint64(r[28:]))
	e.SysFlag = int32(be.Uint32(r[36:]))
	e.BornTimestamp = int64(be.Uint64(r[40:]))
	bl, sl := 8, 8
	if e.SysFlag&BornHostV6Flag != 0 {
		bl = 20
	}
	if e.SysFlag&StoreHostV6Flag != 0 {
		sl = 20
	}
	p := 48
	if len(r) < p+bl+8+sl+16 {
		return ErrSize
	}
	e.BornHost = getHost(r[p:], bl == 20)
	p += bl
	e.StoreTimestamp = int64(be.Uint64(r[p:]))
	p += 8
	e.StoreHost = getHost(r[p:], sl == 20)
	p += sl
	e.ReconsumeTimes = int32(be.Uint32(r[p:]))
	e.PreparedTransactionOffset = int64(be.Uint64(r[p+4:]))
	bodyLen := int64(int32(be.Uint32(r[p+12:])))
	p += 16
	if bodyLen < 0 || int64(p)+bodyLen > int64(len(r)) {
		return ErrSize
	}
	e.Body = r[p : p+int(bodyLen) : p+int(bodyLen)]
	p += int(bodyLen)
	var topicLen int
	if magic == MagicV1 {
		if p+1 > len(r) {
			return ErrSize
		}
		// compat: V1 topic length is a signed byte in Java.
		topicLen = int(int8(r[p]))
		p++
	} else {
		if p+2 > len(r) {
			return ErrSize
		}
		topicLen = int(int16(be.Uint16(r[p:])))
		p += 2
	}
	if topicLen < 0 || p+topicLen+2 > len(r) {
		return ErrSize
	}
	e.Topic = bytesString(r[p : p+topicLen])
	p += topicLen
	propLen := int(int16(be.Uint16(r[p:])))
	p += 2
	if propLen < 0 || p+propLen != len(r) {
		return ErrSize
	}
	e.Properties = bytesString(r[p : p+propLen])
	return nil
}

// CheckCRC verifies the stored body CRC.
func (e *Ext) CheckCRC() error {
	if BodyCRC(e.Body) != e.BodyCRC {
		return ErrCRC
	}
	return nil
}

// Message returns the record as a Message for re-appending (retry, delay,
// transaction commit); its slices alias the record.
func (e *Ext) Message() Message {
	return Message{
		Topic: e.Topic, QueueID: e.QueueID, Flag: e.Flag, Body: e.Body,
		Properties: e.Properties, BornTimestamp: e.BornTimestamp,
		BornHost: e.BornHost, StoreHost: e.StoreHost, SysFlag: e.SysFlag,
		ReconsumeTimes: e.ReconsumeTimes, PreparedTransactionOffset: e.PreparedTransactionOffset,
		StoreTimestamp: e.StoreTimestamp,
	}
}

// StoreTimestampOf reads the store timestamp of the record at the start of
// b without a full decode (b must hold the whole fixed header).
func StoreTimestampOf(b []byte) (int64, error) {
	if len(b) < 56+8 {
		return 0, ErrTruncated
	}
	p := 56
	if int32(binary.BigEndian.Uint32(b[36:]))&BornHostV6Flag != 0 {
		p += 12
	}
	if len(b) < p+8 {
		return 0, ErrTruncated
	}
	return int64(binary.BigEndian.Uint64(b[p:])), nil
}
