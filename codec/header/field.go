package header

import (
	"errors"
	"strconv"
	"strings"
	"unsafe"

	"github.com/rocketgo/rocketgo/codec"
)

// Header is implemented by every generated header type.
type Header interface {
	Decode(f *codec.Frame) error
	Encode(f *codec.Frame)
	AppendExt(f *codec.Frame, scratch []byte) []byte
}

// Sentinels wrapped by *FieldError, for errors.Is.
var (
	ErrMissingField = errors.New("header: required field missing")
	ErrInvalidField = errors.New("header: invalid field value")
)

// FieldError reports a header field Decode could not accept.
type FieldError struct {
	Header string // Go type name, e.g. "PullMessageRequest"
	Key    string // extFields key
	Value  string // offending value (a copy); empty when missing
	Err    error  // ErrMissingField or ErrInvalidField
}

func (e *FieldError) Error() string {
	if e.Err == ErrMissingField {
		// Java's wording, so remarks read the same.
		return "the custom field <" + e.Key + "> is null"
	}
	return "header " + e.Header + ": field " + e.Key + ": invalid value " + strconv.Quote(e.Value)
}

func (e *FieldError) Unwrap() error { return e.Err }

func missingField(hdr, key string) error {
	return &FieldError{Header: hdr, Key: key, Err: ErrMissingField}
}

func invalidField(hdr string, kv *codec.KV) error {
	return &FieldError{Header: hdr, Key: kv.Key, Value: strings.Clone(kv.Value), Err: ErrInvalidField}
}

// mark records in seen whether the required field with the given bit is
// present (an empty value counts as absent; the last occurrence wins).
func mark(seen, bit uint64, v string) uint64 {
	if v == "" {
		return seen &^ bit
	}
	return seen | bit
}

// parseInt32 parses like Java's Integer.parseInt (optional sign, decimal
// digits, range checked); an empty value yields def.
func parseInt32(hdr string, kv *codec.KV, def int32) (int32, error) {
	if kv.Value == "" {
		return def, nil
	}
	v, ok := parseDecimal(kv.Value, 1<<31-1, 1<<31)
	if !ok {
		return 0, invalidField(hdr, kv)
	}
	return int32(v), nil
}

// parseInt64 parses like Java's Long.parseLong; an empty value yields def.
func parseInt64(hdr string, kv *codec.KV, def int64) (int64, error) {
	if kv.Value == "" {
		return def, nil
	}
	v, ok := parseDecimal(kv.Value, 1<<63-1, 1<<63)
	if !ok {
		return 0, invalidField(hdr, kv)
	}
	return v, nil
}

// parseDecimal parses an optionally signed run of ASCII digits whose value
// lies in [-negLimit, posLimit]. It accepts exactly what
// strconv.ParseInt(s, 10, bits) accepts, several times faster.
func parseDecimal(s string, posLimit, negLimit uint64) (int64, bool) {
	i, limit, neg := 0, posLimit, false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		if neg {
			limit = negLimit
		}
		i = 1
	}
	if i == len(s) {
		return 0, false
	}
	var u uint64
	if len(s)-i <= 18 {
		// At most 18 digits cannot overflow uint64: check the range once.
		for ; i < len(s); i++ {
			c := uint64(s[i] - '0')
			if c > 9 {
				return 0, false
			}
			u = u*10 + c
		}
		if u > limit {
			return 0, false
		}
	} else {
		for ; i < len(s); i++ {
			c := uint64(s[i] - '0')
			if c > 9 || u > (limit-c)/10 {
				return 0, false
			}
			u = u*10 + c
		}
	}
	if neg {
		return int64(-u), true
	}
	return int64(u), true
}

// parseBool is Java's Boolean.parseBoolean: "true" in any case is true,
// anything else false. An empty value yields def.
func parseBool(s string, def bool) bool {
	if s == "" {
		return def
	}
	return len(s) == 4 && strings.EqualFold(s, "true")
}

func formatBool(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// appendInt formats v into scratch and appends key=v to f.Ext, the value
// aliasing scratch. Bytes already in scratch are never rewritten, so
// earlier values stay valid when append moves scratch to a new array.
func appendInt(f *codec.Frame, key string, v int64, scratch []byte) []byte {
	if v >= 0 && v < 100 {
		// strconv keeps these as constants: no scratch needed.
		f.Ext = append(f.Ext, codec.KV{Key: key, Value: strconv.FormatInt(v, 10)})
		return scratch
	}
	start := len(scratch)
	scratch = strconv.AppendInt(scratch, v, 10)
	s := scratch[start:]
	f.Ext = append(f.Ext, codec.KV{Key: key, Value: unsafe.String(&s[0], len(s))})
	return scratch
}
