package capture

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Serialization type bytes in the high byte of the second frame word.
const (
	serializeJSON     = 0
	serializeRocketMQ = 1
)

// FlagResponse marks a response frame; FlagOneway a oneway request.
const (
	FlagResponse = 1 << 0
	FlagOneway   = 1 << 1
)

// languageNames maps RocketMQ LanguageCode ordinals to their Java names.
var languageNames = []string{"JAVA", "CPP", "DOTNET", "PYTHON", "DELPHI", "ERLANG", "RUBY",
	"OTHER", "HTTP", "GO", "PHP", "OMS", "RUST", "NODE_JS"}

// Frame is one decoded remoting frame.
type Frame struct {
	Code      int32
	Language  string
	Version   int32
	Opaque    int32
	Flag      int32
	Remark    string
	Ext       map[string]string
	Serialize string // "JSON" or "ROCKETMQ"
	Body      []byte
}

// IsResponse reports whether the response bit is set.
func (f *Frame) IsResponse() bool { return f.Flag&FlagResponse != 0 }

// ErrShortFrame is returned when a buffer does not hold a whole frame.
var ErrShortFrame = errors.New("capture: short frame")

// ReadFrame reads one whole frame (length prefix included) from r. Frames
// whose declared length is below 4 or above max are refused.
func ReadFrame(r io.Reader, max int) ([]byte, error) {
	var lenBuf [4]byte
	if _, err := io.ReadFull(r, lenBuf[:]); err != nil {
		return nil, err
	}
	n := int(int32(binary.BigEndian.Uint32(lenBuf[:])))
	if n < 4 || n > max {
		return nil, fmt.Errorf("capture: frame length %d out of range [4,%d]", n, max)
	}
	raw := make([]byte, 4+n)
	copy(raw, lenBuf[:])
	if _, err := io.ReadFull(r, raw[4:]); err != nil {
		return nil, fmt.Errorf("capture: read frame body: %w", err)
	}
	return raw, nil
}

// ParseFrame decodes raw, which starts with the 4-byte total length.
func ParseFrame(raw []byte) (*Frame, error) {
	if len(raw) < 8 {
		return nil, ErrShortFrame
	}
	total := int(binary.BigEndian.Uint32(raw[0:4]))
	if total != len(raw)-4 {
		return nil, fmt.Errorf("capture: length prefix %d, have %d bytes", total, len(raw)-4)
	}
	mark := binary.BigEndian.Uint32(raw[4:8])
	st := byte(mark >> 24)
	hlen := int(mark & 0xFFFFFF)
	if 8+hlen > len(raw) {
		return nil, fmt.Errorf("capture: header length %d exceeds frame", hlen)
	}
	hdr := raw[8 : 8+hlen]
	f := &Frame{Body: raw[8+hlen:]}
	var err error
	switch st {
	case serializeJSON:
		f.Serialize = "JSON"
		err = parseJSONHeader(hdr, f)
	case serializeRocketMQ:
		f.Serialize = "ROCKETMQ"
		err = parseBinaryHeader(hdr, f)
	default:
		err = fmt.Errorf("capture: unknown serialize type %d", st)
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

func parseJSONHeader(hdr []byte, f *Frame) error {
	var h struct {
		Code      int32                      `json:"code"`
		Language  json.RawMessage            `json:"language"`
		Version   int32                      `json:"version"`
		Opaque    int32                      `json:"opaque"`
		Flag      int32                      `json:"flag"`
		Remark    *string                    `json:"remark"`
		ExtFields map[string]json.RawMessage `json:"extFields"`
	}
	if err := json.Unmarshal(hdr, &h); err != nil {
		return fmt.Errorf("capture: json header: %w", err)
	}
	f.Code, f.Version, f.Opaque, f.Flag = h.Code, h.Version, h.Opaque, h.Flag
	if h.Remark != nil {
		f.Remark = *h.Remark
	}
	f.Language = jsonScalar(h.Language)
	if n, err := strconv.Atoi(f.Language); err == nil && n >= 0 && n < len(languageNames) {
		f.Language = languageNames[n]
	}
	if h.ExtFields != nil {
		f.Ext = make(map[string]string, len(h.ExtFields))
		for k, v := range h.ExtFields {
			f.Ext[k] = jsonScalar(v)
		}
	}
	return nil
}

// jsonScalar renders a JSON scalar as its string value (strings unquoted).
func jsonScalar(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

func parseBinaryHeader(hdr []byte, f *Frame) error {
	r := byteReader{b: hdr}
	f.Code = int32(int16(r.u16()))
	lang := int(r.u8())
	if lang < len(languageNames) {
		f.Language = languageNames[lang]
	} else {
		f.Language = strconv.Itoa(lang)
	}
	f.Version = int32(int16(r.u16()))
	f.Opaque = int32(r.u32())
	f.Flag = int32(r.u32())
	f.Remark = string(r.bytes(int(int32(r.u32()))))
	extLen := int(int32(r.u32()))
	if extLen > 0 {
		ext := byteReader{b: r.bytes(extLen)}
		f.Ext = map[string]string{}
		for ext.err == nil && len(ext.b) > 0 {
			k := ext.bytes(int(ext.u16()))
			v := ext.bytes(int(int32(ext.u32())))
			if ext.err == nil {
				f.Ext[string(k)] = string(v)
			}
		}
		if ext.err != nil {
			return fmt.Errorf("capture: binary ext fields: %w", ext.err)
		}
	}
	if r.err != nil {
		return fmt.Errorf("capture: binary header: %w", r.err)
	}
	return nil
}

// byteReader is a sticky-error big-endian reader.
type byteReader struct {
	b   []byte
	err error
}

func (r *byteReader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = ErrShortFrame
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *byteReader) u8() uint8 {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *byteReader) u16() uint16 {
	if b := r.bytes(2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

func (r *byteReader) u32() uint32 {
	if b := r.bytes(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

// EncodeRequest builds a JSON-header request frame the way the Java client
// does (language JAVA, version 479 = 5.3.3). Extra flags (FlagOneway) may be set.
func EncodeRequest(code, opaque, flag int32, ext map[string]string, body []byte) []byte {
	hdr := map[string]any{
		"code": code, "language": "JAVA", "version": 479, "opaque": opaque, "flag": flag,
		"serializeTypeCurrentRPC": "JSON",
	}
	if ext != nil {
		hdr["extFields"] = ext
	}
	h, err := json.Marshal(hdr)
	if err != nil {
		panic("capture: marshal of a plain map failed: " + err.Error())
	}
	out := make([]byte, 8, 8+len(h)+len(body))
	binary.BigEndian.PutUint32(out[0:4], uint32(4+len(h)+len(body)))
	binary.BigEndian.PutUint32(out[4:8], uint32(len(h))) // serialize type 0 = JSON
	out = append(out, h...)
	return append(out, body...)
}
