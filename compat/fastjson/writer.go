package fastjson

import (
	"strconv"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of both Writer and Reader.
const MaxDepth = 64

// maxSafeLong is JavaScript's Number.MAX_SAFE_INTEGER; BrowserCompatible
// writes longs beyond it as strings.
const maxSafeLong = 1<<53 - 1

const upperHex = "0123456789ABCDEF"

// Writer appends fastjson-shaped JSON to Buf. It inserts commas itself, so
// callers only say what comes next. The zero value (with Buf set to the
// destination) is ready to use; it allocates nothing beyond growing Buf.
type Writer struct {
	Buf []byte
	// Browser selects SerializerFeature.BrowserCompatible output.
	Browser bool

	depth    int
	nonEmpty uint64 // bit d-1 set when the container at depth d has an element
	afterKey bool   // a key was just written: the next value takes no comma
}

// Reset empties the writer, keeping Buf's capacity and the Browser flag.
func (w *Writer) Reset() {
	w.Buf = w.Buf[:0]
	w.depth, w.nonEmpty, w.afterKey = 0, 0, false
}

// Bytes returns the JSON written so far.
func (w *Writer) Bytes() []byte { return w.Buf }

// sep writes the comma that separates this element from the previous one.
func (w *Writer) sep() {
	if w.afterKey {
		w.afterKey = false
		return
	}
	if w.depth == 0 {
		return
	}
	bit := uint64(1) << (w.depth - 1)
	if w.nonEmpty&bit != 0 {
		w.Buf = append(w.Buf, ',')
	} else {
		w.nonEmpty |= bit
	}
}

func (w *Writer) push(c byte) {
	w.sep()
	if w.depth >= MaxDepth {
		panic("fastjson: Writer nesting exceeds MaxDepth")
	}
	w.depth++
	w.nonEmpty &^= uint64(1) << (w.depth - 1)
	w.Buf = append(w.Buf, c)
}

func (w *Writer) pop(c byte) {
	if w.depth == 0 {
		panic("fastjson: Writer container end without start")
	}
	w.depth--
	w.Buf = append(w.Buf, c)
}

// ObjectStart writes '{'.
func (w *Writer) ObjectStart() { w.push('{') }

// ObjectEnd writes '}'.
func (w *Writer) ObjectEnd() { w.pop('}') }

// ArrayStart writes '['.
func (w *Writer) ArrayStart() { w.push('[') }

// ArrayEnd writes ']'.
func (w *Writer) ArrayEnd() { w.pop(']') }

// Key writes a quoted property or map key and the colon.
func (w *Writer) Key(k string) {
	w.sep()
	w.Buf = w.appendString(w.Buf, k)
	w.Buf = append(w.Buf, ':')
	w.afterKey = true
}

// KeyInt writes an integer map key: bare as fastjson writes Integer/Long
// keys, quoted in Browser mode.
func (w *Writer) KeyInt(k int64) {
	w.sep()
	if w.Browser {
		w.Buf = append(w.Buf, '"')
		w.Buf = strconv.AppendInt(w.Buf, k, 10)
		w.Buf = append(w.Buf, '"', ':')
	} else {
		// compat: fastjson writes non-string map keys without quotes.
		w.Buf = strconv.AppendInt(w.Buf, k, 10)
		w.Buf = append(w.Buf, ':')
	}
	w.afterKey = true
}

// KeyMessageQueue writes a MessageQueue map key: the bean itself as the
// key, or in Browser mode the bean's JSON as a string.
func (w *Writer) KeyMessageQueue(topic, brokerName string, queueID int32) {
	w.sep()
	if w.Browser {
		var tmp [256]byte
		inner := AppendMessageQueue(tmp[:0], topic, brokerName, queueID)
		w.Buf = w.appendString(w.Buf, string(inner))
	} else {
		// compat: fastjson writes bean map keys as the bean's JSON, unquoted.
		w.Buf = AppendMessageQueue(w.Buf, topic, brokerName, queueID)
	}
	w.Buf = append(w.Buf, ':')
	w.afterKey = true
}

// MessageQueue writes a MessageQueue bean as a value.
func (w *Writer) MessageQueue(topic, brokerName string, queueID int32) {
	w.sep()
	w.Buf = AppendMessageQueue(w.Buf, topic, brokerName, queueID)
}

// AppendMessageQueue appends {"brokerName":…,"queueId":…,"topic":…}.
func AppendMessageQueue(dst []byte, topic, brokerName string, queueID int32) []byte {
	dst = append(dst, `{"brokerName":`...)
	dst = AppendString(dst, brokerName)
	dst = append(dst, `,"queueId":`...)
	dst = strconv.AppendInt(dst, int64(queueID), 10)
	dst = append(dst, `,"topic":`...)
	dst = AppendString(dst, topic)
	return append(dst, '}')
}

// String writes a string value.
func (w *Writer) String(s string) {
	w.sep()
	w.Buf = w.appendString(w.Buf, s)
}

// Int writes an int/long value (a string beyond ±(2^53-1) in Browser mode).
func (w *Writer) Int(v int64) {
	w.sep()
	if w.Browser && (v > maxSafeLong || v < -maxSafeLong) {
		w.Buf = append(w.Buf, '"')
		w.Buf = strconv.AppendInt(w.Buf, v, 10)
		w.Buf = append(w.Buf, '"')
		return
	}
	w.Buf = strconv.AppendInt(w.Buf, v, 10)
}

// Bool writes true or false.
func (w *Writer) Bool(v bool) {
	w.sep()
	w.Buf = strconv.AppendBool(w.Buf, v)
}

// Float writes a double as Java's Double.toString does; NaN and infinities
// become null, as in fastjson.
func (w *Writer) Float(v float64) {
	w.sep()
	w.Buf = AppendDouble(w.Buf, v)
}

// Null writes null (fastjson omits null properties; arrays may hold them).
func (w *Writer) Null() {
	w.sep()
	w.Buf = append(w.Buf, "null"...)
}

// Raw writes pre-encoded JSON as one value.
func (w *Writer) Raw(b []byte) {
	w.sep()
	w.Buf = append(w.Buf, b...)
}

// StringField writes "k":"v".
func (w *Writer) StringField(k, v string) { w.Key(k); w.String(v) }

// OptStringField writes "k":"v" unless v is empty (a null Java String).
func (w *Writer) OptStringField(k, v string) {
	if v != "" {
		w.Key(k)
		w.String(v)
	}
}

// IntField writes "k":v.
func (w *Writer) IntField(k string, v int64) { w.Key(k); w.Int(v) }

// BoolField writes "k":true|false.
func (w *Writer) BoolField(k string, v bool) { w.Key(k); w.Bool(v) }

// FloatField writes "k":v as a Java double.
func (w *Writer) FloatField(k string, v float64) { w.Key(k); w.Float(v) }

// StringsField writes "k":["a","b"].
func (w *Writer) StringsField(k string, v []string) {
	w.Key(k)
	w.ArrayStart()
	for _, s := range v {
		w.String(s)
	}
	w.ArrayEnd()
}

// EmptyObjectField writes "k":{}.
func (w *Writer) EmptyObjectField(k string) {
	w.Key(k)
	w.sep()
	w.Buf = append(w.Buf, '{', '}')
}

func (w *Writer) appendString(dst []byte, s string) []byte {
	if w.Browser {
		return AppendBrowserString(dst, s)
	}
	return AppendString(dst, s)
}

// needsEscape marks the ASCII bytes fastjson escapes: 1 = short escape,
// 4 = \u00XX.
var needsEscape = [128]byte{
	0: 4, 1: 4, 2: 4, 3: 4, 4: 4, 5: 4, 6: 4, 7: 4,
	'\b': 1, '\t': 1, '\n': 1, 0x0B: 4, '\f': 1, '\r': 1,
	0x0E: 4, 0x0F: 4, 0x10: 4, 0x11: 4, 0x12: 4, 0x13: 4, 0x14: 4, 0x15: 4,
	0x16: 4, 0x17: 4, 0x18: 4, 0x19: 4, 0x1A: 4, 0x1B: 4, 0x1C: 4, 0x1D: 4,
	0x1E: 4, 0x1F: 4, '"': 1, '\\': 1, 0x7F: 4,
}

var shortEscape = [128]byte{'\b': 'b', '\t': 't', '\n': 'n', '\f': 'f', '\r': 'r', '"': '"', '\\': '\\', '/': '/'}

func appendU(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', upperHex[r>>12&15], upperHex[r>>8&15], upperHex[r>>4&15], upperHex[r&15])
}

// AppendString appends s as fastjson writes a string by default: control
// characters, DEL, C1 controls and U+2028/U+2029 as \uXXXX, the usual
// short escapes, everything else raw. Invalid UTF-8 bytes become U+FFFD
// (what Java would have decoded them to).
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if e := needsEscape[c]; e != 0 {
				dst = append(dst, s[start:i]...)
				if e == 1 {
					dst = append(dst, '\\', shortEscape[c])
				} else {
					dst = appendU(dst, rune(c))
				}
				start = i + 1
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			dst = append(dst, s[start:i]...)
			dst = utf8.AppendRune(dst, utf8.RuneError)
			start = i + 1
		case r < 0xA0 || r == 0x2028 || r == 0x2029:
			dst = append(dst, s[start:i]...)
			dst = appendU(dst, r)
			start = i + n
		}
		i += n
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendBrowserString appends s as fastjson's BrowserCompatible mode does:
// short escapes (including \/), other controls as \u00XX, every character
// from U+007F up as \uXXXX UTF-16 units.
func AppendBrowserString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r < 0x20:
			if e := shortEscape[r]; e != 0 {
				dst = append(dst, '\\', e)
			} else {
				dst = appendU(dst, r)
			}
		case r == '"' || r == '\\' || r == '/':
			dst = append(dst, '\\', byte(r))
		case r < 0x7F:
			dst = append(dst, byte(r))
		case r > 0xFFFF:
			r -= 0x10000
			dst = appendU(dst, 0xD800+(r>>10))
			dst = appendU(dst, 0xDC00+(r&0x3FF))
		default:
			dst = appendU(dst, r)
		}
	}
	return append(dst, '"')
}

// AppendDouble appends v in the form of Java's Double.toString (the
// shortest digits that round-trip, as fastjson's Ryu writer produces):
// plain decimal with at least one fraction digit for 1e-3 <= |v| < 1e7,
// otherwise d.dddE±n. NaN and infinities are written as null.
func AppendDouble(dst []byte, v float64) []byte {
	if v != v || v > 1.7976931348623157e308 || v < -1.7976931348623157e308 {
		return append(dst, "null"...)
	}
	if v == 0 {
		if 1/v < 0 {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], v, 'e', -1, 64) // -d.ddde±XX
	neg := e[0] == '-'
	if neg {
		e = e[1:]
		dst = append(dst, '-')
	}
	var digits [24]byte
	nd := 0
	i := 0
	for ; i < len(e) && e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[nd] = e[i]
			nd++
		}
	}
	exp, _ := strconv.Atoi(string(e[i+1:]))
	abs := v
	if neg {
		abs = -v
	}
	if abs >= 1e-3 && abs < 1e7 {
		if exp >= 0 {
			// integer part = first exp+1 digits (padded with zeros)
			for k := 0; k <= exp; k++ {
				if k < nd {
					dst = append(dst, digits[k])
				} else {
					dst = append(dst, '0')
				}
			}
			dst = append(dst, '.')
			if exp+1 < nd {
				dst = append(dst, digits[exp+1:nd]...)
			} else {
				dst = append(dst, '0')
			}
			return dst
		}
		dst = append(dst, '0', '.')
		for k := 0; k < -exp-1; k++ {
			dst = append(dst, '0')
		}
		return append(dst, digits[:nd]...)
	}
	dst = append(dst, digits[0], '.')
	if nd > 1 {
		dst = append(dst, digits[1:nd]...)
	} else {
		dst = append(dst, '0')
	}
	dst = append(dst, 'E')
	return strconv.AppendInt(dst, int64(exp), 10)
}
