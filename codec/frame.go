package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"unsafe"
)

// SerializeType selects the header encoding of one frame.
type SerializeType uint8

const (
	// SerializeJSON is the fastjson-shaped header (type byte 0).
	SerializeJSON SerializeType = 0
	// SerializeRocketMQ is the binary header (type byte 1).
	SerializeRocketMQ SerializeType = 1
)

// Flag bits.
const (
	FlagResponse int32 = 1 << 0
	FlagOneway   int32 = 1 << 1
)

// DefaultMaxFrameLength is Java's frameMaxLength: the length field plus its
// own four bytes may not exceed it.
const DefaultMaxFrameLength = 16 << 20

// ServerVersion is the MQVersion ordinal we announce (V5_4_0, Java 5.4.0's
// CURRENT_VERSION; 479 was V5_3_3): high enough that Java clients allow
// SQL92 subscriptions (they need >= 232). No client or tool of either
// release branches on a version past V5_3_1 (a shutting-down proxy's
// GO_AWAY), so peers treat both alike.
const ServerVersion int32 = 493

// ServerVersionName is ServerVersion's MQVersion.Version name
// (GET_BROKER_RUNTIME_INFO's brokerVersionDesc).
const ServerVersionName = "V5_4_0"

// Errors returned by the frame decoder. Every one of them means the
// connection is out of sync and must be closed.
var (
	ErrFrameTooLarge  = errors.New("codec: frame length exceeds maximum")
	ErrFrameTooShort  = errors.New("codec: frame length too short")
	ErrHeaderLength   = errors.New("codec: header length beyond frame")
	ErrSerializeType  = errors.New("codec: unknown serialize type")
	ErrMalformedJSON  = errors.New("codec: malformed JSON header")
	ErrMalformedRMQ   = errors.New("codec: malformed ROCKETMQ header")
	ErrFrameTruncated = errors.New("codec: truncated frame")
)

// KV is one extFields entry.
type KV struct {
	Key, Value string
}

// Frame is one remoting command. After Decode its strings and Body alias
// the decoded buffer.
type Frame struct {
	Code      int32
	Language  LanguageCode
	Version   int32
	Opaque    int32
	Flag      int32
	Remark    string
	Ext       []KV
	Body      []byte
	Serialize SerializeType
	// Arrived is when the transport handed the request to its router, in
	// unix nanoseconds (0: not stamped). Not on the wire: the request's
	// latency for metrics, like Java's RemotingCommand processTimer.
	Arrived int64
	// Suspended marks a request its handler held before answering (a
	// long-polling pull), like Java's RemotingCommand.isSuspended: the
	// is_long_polling label of the latency metrics. Not on the wire.
	Suspended bool
}

// IsResponse reports whether the response bit is set.
func (f *Frame) IsResponse() bool { return f.Flag&FlagResponse != 0 }

// IsOneway reports whether the oneway bit is set.
func (f *Frame) IsOneway() bool { return f.Flag&FlagOneway != 0 }

// Reset clears f for reuse, keeping the Ext capacity.
func (f *Frame) Reset() {
	ext := f.Ext[:0]
	*f = Frame{Ext: ext}
}

// Get returns the value of an extFields key. An empty value counts as
// absent: the Go client sends "" for unset keys and the ROCKETMQ codec of
// Java turns empty strings into nulls.
func (f *Frame) Get(key string) (string, bool) {
	for i := len(f.Ext) - 1; i >= 0; i-- { // last one wins, as Java's HashMap
		if f.Ext[i].Key == key {
			return f.Ext[i].Value, f.Ext[i].Value != ""
		}
	}
	return "", false
}

// Value returns the value of key or "".
func (f *Frame) Value(key string) string {
	v, _ := f.Get(key)
	return v
}

// Set replaces or adds an extFields entry.
func (f *Frame) Set(key, value string) {
	for i := range f.Ext {
		if f.Ext[i].Key == key {
			f.Ext[i].Value = value
			return
		}
	}
	f.Ext = append(f.Ext, KV{key, value})
}

// SetInt sets key to the decimal form of v.
func (f *Frame) SetInt(key string, v int64) { f.Set(key, strconv.FormatInt(v, 10)) }

// NewResponse starts the response to req: same opaque, response flag,
// given code and remark, our version, JSON serialization.
func NewResponse(req *Frame, code int32, remark string) *Frame {
	return &Frame{Code: code, Language: LangJava, Version: ServerVersion, Opaque: req.Opaque, Flag: FlagResponse, Remark: remark}
}

// FrameLength reads the 4-byte length prefix and validates it against max
// (which counts the prefix itself, as Java does). It returns the number of
// payload bytes that follow the prefix.
func FrameLength(prefix []byte, max int) (int, error) {
	n := int(int32(binary.BigEndian.Uint32(prefix)))
	if n < 4 {
		return 0, fmt.Errorf("%w: %d", ErrFrameTooShort, n)
	}
	if max > 0 && n+4 > max {
		return 0, fmt.Errorf("%w: %d > %d", ErrFrameTooLarge, n+4, max)
	}
	return n, nil
}

// Decode parses a frame payload (everything after the length prefix) into
// f. Strings and Body alias payload, which Decode may modify in place (JSON
// unescaping). f.Ext is reused.
func Decode(payload []byte, f *Frame) error {
	f.Reset()
	if len(payload) < 4 {
		return ErrFrameTruncated
	}
	word := binary.BigEndian.Uint32(payload)
	hl := int(word & 0xFFFFFF)
	if hl > len(payload)-4 {
		return fmt.Errorf("%w: header %d, frame %d", ErrHeaderLength, hl, len(payload)-4)
	}
	hdr := payload[4 : 4+hl]
	if body := payload[4+hl:]; len(body) > 0 {
		f.Body = body
	}
	switch SerializeType(word >> 24) {
	case SerializeJSON:
		f.Serialize = SerializeJSON
		return decodeJSONHeader(hdr, f)
	case SerializeRocketMQ:
		f.Serialize = SerializeRocketMQ
		return decodeRMQHeader(hdr, f)
	default:
		return fmt.Errorf("%w: %d", ErrSerializeType, word>>24)
	}
}

// AppendTo appends the whole frame (length prefix, header, body) to dst.
func (f *Frame) AppendTo(dst []byte) []byte {
	dst = f.AppendHeader(dst, len(f.Body))
	return append(dst, f.Body...)
}

// AppendHeader appends the length prefix and header of a frame whose body
// (bodyLen bytes, f.Body ignored) the caller writes separately, e.g. with a
// vectored write.
func (f *Frame) AppendHeader(dst []byte, bodyLen int) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
	if f.Serialize == SerializeRocketMQ {
		dst = appendRMQHeader(dst, f)
	} else {
		dst = appendJSONHeader(dst, f)
	}
	hl := len(dst) - start - 8
	binary.BigEndian.PutUint32(dst[start:], uint32(4+hl+bodyLen))
	binary.BigEndian.PutUint32(dst[start+4:], uint32(f.Serialize)<<24|uint32(hl)&0xFFFFFF)
	return dst
}

// bstr views b as a string without copying; b must not change afterwards.
func bstr(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func decodeRMQHeader(h []byte, f *Frame) error {
	if len(h) < 21 {
		return ErrMalformedRMQ
	}
	f.Code = int32(int16(binary.BigEndian.Uint16(h)))
	f.Language = LanguageCode(h[2])
	f.Version = int32(int16(binary.BigEndian.Uint16(h[3:])))
	f.Opaque = int32(binary.BigEndian.Uint32(h[5:]))
	f.Flag = int32(binary.BigEndian.Uint32(h[9:]))
	p := 13
	rl := int(int32(binary.BigEndian.Uint32(h[p:])))
	p += 4
	if rl < 0 || rl > len(h)-p-4 {
		return fmt.Errorf("%w: remark length %d", ErrMalformedRMQ, rl)
	}
	f.Remark = bstr(h[p : p+rl])
	p += rl
	el := int(int32(binary.BigEndian.Uint32(h[p:])))
	p += 4
	if el < 0 || el > len(h)-p {
		return fmt.Errorf("%w: ext length %d", ErrMalformedRMQ, el)
	}
	m := h[p : p+el]
	for len(m) > 0 {
		if len(m) < 2 {
			return fmt.Errorf("%w: ext key length", ErrMalformedRMQ)
		}
		kl := int(int16(binary.BigEndian.Uint16(m)))
		m = m[2:]
		if kl < 0 || kl+4 > len(m) {
			return fmt.Errorf("%w: ext key length %d", ErrMalformedRMQ, kl)
		}
		k := bstr(m[:kl])
		m = m[kl:]
		vl := int(int32(binary.BigEndian.Uint32(m)))
		m = m[4:]
		if vl < 0 || vl > len(m) {
			return fmt.Errorf("%w: ext value length %d", ErrMalformedRMQ, vl)
		}
		f.Ext = append(f.Ext, KV{k, bstr(m[:vl])})
		m = m[vl:]
	}
	return nil
}

func appendRMQHeader(dst []byte, f *Frame) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(f.Code)))
	dst = append(dst, byte(f.Language))
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(f.Version)))
	dst = binary.BigEndian.AppendUint32(dst, uint32(f.Opaque))
	dst = binary.BigEndian.AppendUint32(dst, uint32(f.Flag))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(f.Remark)))
	dst = append(dst, f.Remark...)
	lenAt := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	for _, kv := range f.Ext {
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(kv.Key)))
		dst = append(dst, kv.Key...)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(kv.Value)))
		dst = append(dst, kv.Value...)
	}
	binary.BigEndian.PutUint32(dst[lenAt:], uint32(len(dst)-lenAt-4))
	return dst
}
