package codec

import (
	"fmt"
	"github.com/rocketgo/rocketgo/compat/fastjson"
	"strconv"
	"unicode/utf8"
)

// maxJSONDepth bounds the nesting of skipped unknown values.
const maxJSONDepth = 32

// decodeJSONHeader parses the flat RemotingCommand object. Unknown keys are
// skipped; "language" may be a name or an ordinal; strings are unescaped in
// place so no allocation is needed.
func decodeJSONHeader(h []byte, f *Frame) error {
	p := jsonParser{b: h}
	p.ws()
	if !p.eat('{') {
		return p.fail("expected object")
	}
	p.ws()
	if p.eat('}') {
		return p.end()
	}
	for {
		p.ws()
		key, ok := p.str()
		if !ok {
			return p.fail("expected key")
		}
		p.ws()
		if !p.eat(':') {
			return p.fail("expected colon")
		}
		p.ws()
		switch key {
		case "code":
			f.Code = int32(p.int())
		case "version":
			f.Version = int32(p.int())
		case "opaque":
			f.Opaque = int32(p.int())
		case "flag":
			f.Flag = int32(p.int())
		case "language":
			if p.peek() == '"' {
				s, _ := p.str()
				f.Language, _ = ParseLanguage(s)
			} else {
				f.Language = LanguageCode(p.int())
			}
		case "remark":
			if p.peek() == '"' {
				f.Remark, _ = p.str()
			} else {
				p.skip(0)
			}
		case "extFields":
			p.ext(f)
		default:
			p.skip(0)
		}
		if p.err != nil {
			return p.err
		}
		p.ws()
		if p.eat(',') {
			continue
		}
		if p.eat('}') {
			return p.end()
		}
		return p.fail("expected , or }")
	}
}

type jsonParser struct {
	b   []byte
	i   int
	err error
}

func (p *jsonParser) fail(msg string) error {
	if p.err == nil {
		p.err = fmt.Errorf("%w: %s at %d", ErrMalformedJSON, msg, p.i)
	}
	return p.err
}

func (p *jsonParser) end() error {
	p.ws()
	if p.i != len(p.b) {
		return p.fail("trailing data")
	}
	return p.err
}

func (p *jsonParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *jsonParser) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a JSON string, unescaping it in place; the result aliases p.b.
func (p *jsonParser) str() (string, bool) {
	if !p.eat('"') {
		p.fail("expected string")
		return "", false
	}
	start := p.i
	// Fast path: most strings carry no escapes and need no rewriting.
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			p.i++
			return bstr(p.b[start : p.i-1]), true
		}
		if c == '\\' {
			break
		}
		p.i++
	}
	w := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return bstr(p.b[start:w]), true
		case c == '\\':
			if p.i+1 >= len(p.b) {
				p.fail("truncated escape")
				return "", false
			}
			e := p.b[p.i+1]
			p.i += 2
			var r byte
			switch e {
			case '"', '\\', '/':
				r = e
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			case 'u':
				cp, ok := p.hex4()
				if !ok {
					return "", false
				}
				if cp >= 0xD800 && cp < 0xDC00 && p.i+6 <= len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
					save := p.i
					p.i += 2
					lo, ok := p.hex4()
					if ok && lo >= 0xDC00 && lo < 0xE000 {
						cp = 0x10000 + (cp-0xD800)<<10 + (lo - 0xDC00)
					} else {
						p.err = nil
						p.i = save
					}
				}
				// The encoding is never longer than the escape it replaces.
				w += utf8.EncodeRune(p.b[w:], rune(cp))
				continue
			default:
				p.fail("bad escape")
				return "", false
			}
			p.b[w] = r
			w++
		default:
			p.b[w] = c
			w++
			p.i++
		}
	}
	p.fail("unterminated string")
	return "", false
}

func (p *jsonParser) hex4() (int, bool) {
	if p.i+4 > len(p.b) {
		p.fail("truncated \\u escape")
		return 0, false
	}
	v := 0
	for _, c := range p.b[p.i : p.i+4] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | int(c-'A'+10)
		default:
			p.fail("bad \\u escape")
			return 0, false
		}
	}
	p.i += 4
	return v, true
}

// int reads an integer, also accepted as a quoted decimal string.
func (p *jsonParser) int() int64 {
	if p.peek() == '"' {
		s, ok := p.str()
		if !ok {
			return 0
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			p.fail("bad integer string")
		}
		return v
	}
	start := p.i
	p.number()
	v, err := strconv.ParseInt(bstr(p.b[start:p.i]), 10, 64)
	if err != nil {
		p.fail("bad integer")
	}
	return v
}

func (p *jsonParser) number() {
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			p.i++
			continue
		}
		break
	}
	if p.i == start {
		p.fail("expected number")
	}
}

func (p *jsonParser) literal(word string) {
	if len(p.b)-p.i >= len(word) && string(p.b[p.i:p.i+len(word)]) == word {
		p.i += len(word)
		return
	}
	p.fail("bad literal")
}

// ext reads the extFields object; non-string scalar values keep their raw
// text, null values are dropped.
func (p *jsonParser) ext(f *Frame) {
	if p.peek() == 'n' {
		p.literal("null")
		return
	}
	if !p.eat('{') {
		p.fail("expected extFields object")
		return
	}
	p.ws()
	if p.eat('}') {
		return
	}
	for p.err == nil {
		p.ws()
		k, ok := p.str()
		if !ok {
			return
		}
		p.ws()
		if !p.eat(':') {
			p.fail("expected colon")
			return
		}
		p.ws()
		switch c := p.peek(); {
		case c == '"':
			v, ok := p.str()
			if !ok {
				return
			}
			f.Ext = append(f.Ext, KV{k, v})
		case c == 'n':
			p.literal("null")
		case c == 't':
			p.literal("true")
			f.Ext = append(f.Ext, KV{k, "true"})
		case c == 'f':
			p.literal("false")
			f.Ext = append(f.Ext, KV{k, "false"})
		default:
			start := p.i
			p.number()
			f.Ext = append(f.Ext, KV{k, bstr(p.b[start:p.i])})
		}
		p.ws()
		if p.eat(',') {
			continue
		}
		if !p.eat('}') {
			p.fail("expected , or } in extFields")
		}
		return
	}
}

// skip passes over any JSON value.
func (p *jsonParser) skip(depth int) {
	if depth > maxJSONDepth {
		p.fail("nesting too deep")
		return
	}
	switch c := p.peek(); c {
	case '"':
		p.str()
	case 'n':
		p.literal("null")
	case 't':
		p.literal("true")
	case 'f':
		p.literal("false")
	case '{', '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		p.i++
		p.ws()
		if p.eat(closer) {
			return
		}
		for p.err == nil {
			p.ws()
			if c == '{' {
				p.str()
				p.ws()
				if !p.eat(':') {
					p.fail("expected colon")
					return
				}
				p.ws()
			}
			p.skip(depth + 1)
			p.ws()
			if p.eat(',') {
				continue
			}
			if !p.eat(closer) {
				p.fail("expected separator")
			}
			return
		}
	default:
		p.number()
	}
}

// appendJSONHeader writes the header as Java's fastjson does: properties
// sorted by name, nulls omitted, compact.
func appendJSONHeader(dst []byte, f *Frame) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(f.Code), 10)
	if len(f.Ext) > 0 {
		dst = append(dst, `,"extFields":{`...)
		for i, kv := range f.Ext {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendJSONString(dst, kv.Key)
			dst = append(dst, ':')
			dst = AppendJSONString(dst, kv.Value)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `,"flag":`...)
	dst = strconv.AppendInt(dst, int64(f.Flag), 10)
	dst = append(dst, `,"language":"`...)
	dst = append(dst, f.Language.String()...)
	dst = append(dst, `","opaque":`...)
	dst = strconv.AppendInt(dst, int64(f.Opaque), 10)
	if f.Remark != "" {
		dst = append(dst, `,"remark":`...)
		dst = AppendJSONString(dst, f.Remark)
	}
	dst = append(dst, `,"serializeTypeCurrentRPC":"JSON","version":`...)
	dst = strconv.AppendInt(dst, int64(f.Version), 10)
	return append(dst, '}')
}

// AppendJSONString appends s as a JSON string exactly as fastjson writes it
// (see compat/fastjson): non-ASCII raw, quotes, backslashes, control
// characters and the few code points fastjson escapes.
func AppendJSONString(dst []byte, s string) []byte { return fastjson.AppendString(dst, s) }
