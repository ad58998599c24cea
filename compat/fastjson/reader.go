package fastjson

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// ErrSyntax is wrapped by every error a Reader reports.
var ErrSyntax = errors.New("fastjson: syntax error")

// Kind is the type of the next value.
type Kind uint8

// Value kinds reported by Peek.
const (
	KindInvalid Kind = iota
	KindNull
	KindBool
	KindNumber
	KindString
	KindObject
	KindArray
)

// Reader pulls values from a JSON document. Typical use:
//
//	r := fastjson.NewReader(body)
//	for r.ObjectStart(); r.More(); {
//		switch r.Key() {
//		case "topic":
//			t.Topic = r.String()
//		default:
//			r.Skip()
//		}
//	}
//	if err := r.End(); err != nil { … }
//
// ObjectStart and ArrayStart open a container and must always be followed
// by a More loop; a null in their place reads as an empty container. More
// consumes the separator or the closing bracket and reports whether another
// element follows. Once an error has occurred every call is a no-op
// returning zero values.
type Reader struct {
	b     []byte
	i     int
	err   error
	depth int
	first uint64 // bit d-1 set while the container at depth d has no element read yet
	null  uint64 // bit d-1 set when the "container" at depth d was a null

	strStart int  // start of the string skipStr last passed over
	escaped  bool // that string held a backslash
	alias    bool // ResetAlias: unescaped strings and keys alias b
}

// NewReader returns a Reader over b. Strings it returns are copies, so b
// may be reused afterwards.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Reset points r at a new document.
func (r *Reader) Reset(b []byte) { *r = Reader{b: b} }

// ResetAlias points r at a new document whose strings and keys, when they
// hold no escape, come back aliasing b instead of as copies: valid only
// while b is unchanged. A hot-path decoder of a request it does not keep
// (BATCH_ACK_MESSAGE) reads this way without allocating.
func (r *Reader) ResetAlias(b []byte) { *r = Reader{b: b, alias: true} }

// text returns b[i:j] as a string: a copy, or an alias in alias mode.
func (r *Reader) text(i, j int) string {
	if r.alias {
		if i == j {
			return ""
		}
		return unsafe.String(&r.b[i], j-i)
	}
	return string(r.b[i:j])
}

// Err returns the first error.
func (r *Reader) Err() error { return r.err }

// End reports the first error, or an error if anything but whitespace
// follows the top-level value.
func (r *Reader) End() error {
	if r.err == nil {
		r.ws()
		if r.i < len(r.b) {
			r.fail("trailing data")
		}
	}
	return r.err
}

// Fail records an error (e.g. a semantic one found by the caller).
func (r *Reader) Fail(msg string) {
	r.fail(msg)
}

func (r *Reader) fail(msg string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s at offset %d", ErrSyntax, msg, r.i)
	}
	r.i = len(r.b)
}

func (r *Reader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r', '\f', '\b':
			r.i++
		default:
			return
		}
	}
}

func (r *Reader) peekByte() byte {
	r.ws()
	if r.i < len(r.b) {
		return r.b[r.i]
	}
	return 0
}

// Peek reports the kind of the next value without consuming it.
func (r *Reader) Peek() Kind {
	if r.err != nil {
		return KindInvalid
	}
	switch c := r.peekByte(); {
	case c == '{':
		return KindObject
	case c == '[':
		return KindArray
	case c == '"' || c == '\'':
		return KindString
	case c == 't' || c == 'f':
		return KindBool
	case c == 'n':
		return KindNull
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
		return KindNumber
	}
	return KindInvalid
}

// Null consumes a null and reports whether there was one.
func (r *Reader) Null() bool {
	if r.err == nil && r.peekByte() == 'n' {
		r.literal("null")
		return r.err == nil
	}
	return false
}

func (r *Reader) literal(word string) {
	if len(r.b)-r.i >= len(word) && string(r.b[r.i:r.i+len(word)]) == word {
		r.i += len(word)
		return
	}
	r.fail("bad literal")
}

func (r *Reader) open(c byte, what string) {
	if r.err != nil {
		return
	}
	if r.depth >= MaxDepth {
		r.fail("nesting too deep")
		return
	}
	isNull := r.Null()
	if !isNull {
		if r.peekByte() != c {
			r.fail("expected " + what)
			return
		}
		r.i++
	}
	r.depth++
	bit := uint64(1) << (r.depth - 1)
	r.first |= bit
	if isNull {
		r.null |= bit
	} else {
		r.null &^= bit
	}
}

// ObjectStart consumes '{' (or a null, read as an empty object).
func (r *Reader) ObjectStart() { r.open('{', "object") }

// ArrayStart consumes '[' (or a null, read as an empty array).
func (r *Reader) ArrayStart() { r.open('[', "array") }

// More reports whether the current object or array has another element,
// consuming the comma before it, or the closing bracket after the last.
func (r *Reader) More() bool {
	if r.err != nil || r.depth == 0 {
		return false
	}
	bit := uint64(1) << (r.depth - 1)
	if r.null&bit != 0 {
		r.null &^= bit
		r.depth--
		return false
	}
	c := r.peekByte()
	if c == '}' || c == ']' {
		r.i++
		r.depth--
		return false
	}
	if r.first&bit != 0 {
		r.first &^= bit
		if c == 0 {
			r.fail("unterminated container")
			return false
		}
		return true
	}
	if c != ',' {
		r.fail("expected , or closing bracket")
		return false
	}
	r.i++
	return true
}

// Key reads an object key and the colon after it. String keys (double or
// single quoted) come back unescaped; bare keys (numbers, identifiers) as
// written; an object key (fastjson's MessageQueue key) as its raw JSON
// text, which starts with '{' and can be read with another Reader.
func (r *Reader) Key() string {
	if r.err != nil {
		return ""
	}
	var k string
	switch c := r.peekByte(); {
	case c == '"' || c == '\'':
		k = r.str()
	case c == '{' || c == '[':
		start := r.i
		r.Skip()
		k = r.text(start, r.i)
	default:
		start := r.i
		for r.i < len(r.b) && isBareKeyByte(r.b[r.i]) {
			r.i++
		}
		if r.i == start {
			r.fail("expected key")
			return ""
		}
		k = r.text(start, r.i)
	}
	if r.peekByte() != ':' {
		r.fail("expected colon")
		return ""
	}
	r.i++
	return k
}

func isBareKeyByte(c byte) bool {
	return c == '_' || c == '$' || c == '-' || c == '.' || c == '+' ||
		(c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

// String reads a string. Numbers and booleans are returned as their text
// (fastjson converts them); null gives "".
func (r *Reader) String() string {
	if r.err != nil {
		return ""
	}
	switch c := r.peekByte(); {
	case c == '"' || c == '\'':
		return r.str()
	case c == 'n':
		r.literal("null")
		return ""
	case c == 't':
		r.literal("true")
		return "true"
	case c == 'f':
		r.literal("false")
		return "false"
	default:
		if n := r.number(); r.alias && len(n) > 0 {
			return unsafe.String(&n[0], len(n))
		} else {
			return string(n)
		}
	}
}

// Int reads an integer; a quoted decimal, a boolean (1/0) and null (0) are
// accepted, as fastjson does. A fraction is truncated.
func (r *Reader) Int() int64 {
	if r.err != nil {
		return 0
	}
	var text []byte
	switch c := r.peekByte(); {
	case c == '"' || c == '\'':
		s := r.str()
		if s == "" {
			return 0
		}
		text = []byte(s)
	case c == 'n':
		r.literal("null")
		return 0
	case c == 't':
		r.literal("true")
		return 1
	case c == 'f':
		r.literal("false")
		return 0
	default:
		text = r.number()
	}
	if r.err != nil {
		return 0
	}
	return r.parseInt(text)
}

func (r *Reader) parseInt(text []byte) int64 {
	for _, c := range text {
		if c == '.' || c == 'e' || c == 'E' {
			f, err := strconv.ParseFloat(string(text), 64)
			if err != nil || f != f || f > 9.2e18 || f < -9.2e18 {
				r.fail("bad number")
				return 0
			}
			return int64(f)
		}
	}
	v, err := strconv.ParseInt(string(text), 10, 64)
	if err != nil {
		r.fail("bad integer")
		return 0
	}
	return v
}

// Float reads a number (or a quoted one); null gives 0.
func (r *Reader) Float() float64 {
	if r.err != nil {
		return 0
	}
	var text string
	switch c := r.peekByte(); {
	case c == '"' || c == '\'':
		text = r.str()
	case c == 'n':
		r.literal("null")
		return 0
	default:
		text = string(r.number())
	}
	if r.err != nil {
		return 0
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		r.fail("bad number")
		return 0
	}
	return f
}

// Bool reads true/false, also "true"/"false" and 1/0; null is false.
func (r *Reader) Bool() bool {
	if r.err != nil {
		return false
	}
	switch c := r.peekByte(); {
	case c == 't':
		r.literal("true")
		return r.err == nil
	case c == 'f':
		r.literal("false")
		return false
	case c == 'n':
		r.literal("null")
		return false
	case c == '"' || c == '\'':
		switch s := r.str(); s {
		case "true", "1":
			return true
		case "false", "0", "":
			return false
		}
		r.fail("bad boolean")
		return false
	default:
		n := r.number()
		return r.err == nil && !(len(n) == 1 && n[0] == '0')
	}
}

// Raw returns the text of the next value and consumes it.
func (r *Reader) Raw() []byte {
	if r.err != nil {
		return nil
	}
	r.ws()
	start := r.i
	r.Skip()
	if r.err != nil {
		return nil
	}
	return r.b[start:r.i]
}

// Skip consumes the next value whatever it is.
func (r *Reader) Skip() {
	if r.err != nil {
		return
	}
	switch r.Peek() {
	case KindObject:
		for r.ObjectStart(); r.More(); {
			r.Key()
			r.Skip()
		}
	case KindArray:
		for r.ArrayStart(); r.More(); {
			r.Skip()
		}
	case KindString:
		r.skipStr()
		if r.err == nil && r.escaped {
			// Validate the escapes the fast scan passed over.
			r.i = r.strStart
			r.str()
		}
	case KindBool:
		if r.b[r.i] == 't' {
			r.literal("true")
		} else {
			r.literal("false")
		}
	case KindNull:
		r.literal("null")
	case KindNumber:
		r.number()
	default:
		r.fail("unexpected character")
	}
}

func (r *Reader) number() []byte {
	r.ws()
	start := r.i
	for r.i < len(r.b) {
		c := r.b[r.i]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			r.i++
			continue
		}
		break
	}
	// fastjson accepts Java literal suffixes: 1L, 2.0D, 1.5F.
	if r.i > start && r.i < len(r.b) {
		switch r.b[r.i] {
		case 'L', 'l', 'D', 'd', 'F', 'f', 'S', 'B':
			n := r.b[start:r.i]
			r.i++
			return n
		}
	}
	if r.i == start {
		r.fail("expected value")
		return nil
	}
	return r.b[start:r.i]
}

// skipStr passes over a string without building it, noting whether it
// holds escapes.
func (r *Reader) skipStr() {
	r.strStart, r.escaped = r.i, false
	q := r.b[r.i]
	r.i++
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case q:
			r.i++
			return
		case '\\':
			r.escaped = true
			r.i += 2
		default:
			r.i++
		}
	}
	r.fail("unterminated string")
}

// str reads a double- or single-quoted string at r.i.
func (r *Reader) str() string {
	q := r.b[r.i]
	r.i++
	start := r.i
	for r.i < len(r.b) {
		c := r.b[r.i]
		if c == q {
			s := r.text(start, r.i)
			r.i++
			return s
		}
		if c == '\\' {
			return r.strSlow(q, start)
		}
		r.i++
	}
	r.fail("unterminated string")
	return ""
}

func (r *Reader) strSlow(q byte, start int) string {
	out := make([]byte, 0, r.i-start+16)
	out = append(out, r.b[start:r.i]...)
	for r.i < len(r.b) {
		c := r.b[r.i]
		if c == q {
			r.i++
			return string(out)
		}
		if c != '\\' {
			out = append(out, c)
			r.i++
			continue
		}
		if r.i+1 >= len(r.b) {
			break
		}
		e := r.b[r.i+1]
		r.i += 2
		switch e {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'v':
			out = append(out, '\v')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			out = append(out, e-'0') // fastjson's \0..\7
		case 'x':
			h, ok := r.hex(2)
			if !ok {
				return ""
			}
			out = utf8.AppendRune(out, rune(h))
		case 'u':
			h, ok := r.hex(4)
			if !ok {
				return ""
			}
			cp := rune(h)
			if utf16.IsSurrogate(cp) {
				if cp < 0xDC00 && r.i+6 <= len(r.b) && r.b[r.i] == '\\' && r.b[r.i+1] == 'u' {
					save := r.i
					r.i += 2
					if lo, ok := r.hex(4); ok && lo >= 0xDC00 && lo < 0xE000 {
						cp = utf16.DecodeRune(cp, rune(lo))
					} else {
						r.i = save
						cp = utf8.RuneError
					}
				} else {
					cp = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, cp)
		default: // \" \' \\ \/ and anything else: the character itself
			out = append(out, e)
		}
	}
	r.fail("unterminated string")
	return ""
}

func (r *Reader) hex(n int) (int, bool) {
	if r.i+n > len(r.b) {
		r.fail("truncated escape")
		return 0, false
	}
	v := 0
	for _, c := range r.b[r.i : r.i+n] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | int(c-'A'+10)
		default:
			r.fail("bad hex escape")
			return 0, false
		}
	}
	r.i += n
	return v, true
}

// ParseMessageQueue reads a MessageQueue given as an object, or as a string
// holding the object's JSON (BrowserCompatible keys), e.g. a Key() result.
func ParseMessageQueue(text string) (topic, brokerName string, queueID int32, err error) {
	if len(text) > 0 && (text[0] == '"' || text[0] == '\'') {
		r := NewReader([]byte(text))
		text = r.String()
		if err := r.End(); err != nil {
			return "", "", 0, err
		}
	}
	r := NewReader([]byte(text))
	for r.ObjectStart(); r.More(); {
		switch r.Key() {
		case "topic":
			topic = r.String()
		case "brokerName":
			brokerName = r.String()
		case "queueId":
			queueID = int32(r.Int())
		default:
			r.Skip()
		}
	}
	return topic, brokerName, queueID, r.End()
}
