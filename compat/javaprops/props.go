package javaprops

import (
	"fmt"
	"unicode/utf8"
)

// Entry is one key/value pair.
type Entry struct {
	Key, Value string
}

// Props is an ordered list of entries with unique keys.
type Props []Entry

// Get returns the value of key.
func (p Props) Get(key string) (string, bool) {
	for _, e := range p {
		if e.Key == key {
			return e.Value, true
		}
	}
	return "", false
}

// Set replaces key's value in place or appends the entry.
func (p *Props) Set(key, value string) {
	for i := range *p {
		if (*p)[i].Key == key {
			(*p)[i].Value = value
			return
		}
	}
	*p = append(*p, Entry{key, value})
}

// Parse reads a .properties document.
func Parse(data []byte) (Props, error) {
	var out Props
	lineNo := 0
	for len(data) > 0 {
		var logical []byte
		var err error
		logical, data, lineNo, err = nextLogicalLine(data, lineNo)
		if err != nil {
			return nil, err
		}
		if logical == nil {
			continue
		}
		key, value, err := splitLine(logical)
		if err != nil {
			return nil, fmt.Errorf("javaprops: line %d: %w", lineNo, err)
		}
		out.Set(key, value)
	}
	return out, nil
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

// cutLine splits off one natural line (terminated by \n, \r or \r\n).
func cutLine(data []byte) (line, rest []byte) {
	for i, c := range data {
		if c == '\n' {
			return data[:i], data[i+1:]
		}
		if c == '\r' {
			if i+1 < len(data) && data[i+1] == '\n' {
				return data[:i], data[i+2:]
			}
			return data[:i], data[i+1:]
		}
	}
	return data, nil
}

// continues reports whether line ends with an odd number of backslashes.
func continues(line []byte) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

func trimLeft(b []byte) []byte {
	for len(b) > 0 && isBlank(b[0]) {
		b = b[1:]
	}
	return b
}

// nextLogicalLine returns the next non-comment, non-blank logical line with
// continuations joined (still escaped), or nil when only blank/comment
// lines were consumed.
func nextLogicalLine(data []byte, lineNo int) (logical, rest []byte, n int, err error) {
	line, rest := cutLine(data)
	lineNo++
	line = trimLeft(line)
	if len(line) == 0 || line[0] == '#' || line[0] == '!' {
		return nil, rest, lineNo, nil
	}
	if !continues(line) {
		return line, rest, lineNo, nil
	}
	buf := append([]byte(nil), line[:len(line)-1]...)
	for {
		if len(rest) == 0 {
			return buf, rest, lineNo, nil
		}
		line, rest = cutLine(rest)
		lineNo++
		line = trimLeft(line)
		if !continues(line) {
			return append(buf, line...), rest, lineNo, nil
		}
		buf = append(buf, line[:len(line)-1]...)
	}
}

// splitLine separates key and value at the first unescaped '=', ':' or
// blank, then unescapes both.
func splitLine(l []byte) (string, string, error) {
	keyEnd := len(l)
	valStart := len(l)
	for i := 0; i < len(l); i++ {
		c := l[i]
		if c == '\\' {
			i++
			continue
		}
		if c == '=' || c == ':' {
			keyEnd, valStart = i, i+1
			break
		}
		if isBlank(c) {
			keyEnd = i
			j := i
			for j < len(l) && isBlank(l[j]) {
				j++
			}
			if j < len(l) && (l[j] == '=' || l[j] == ':') {
				j++
			}
			valStart = j
			break
		}
	}
	key, err := unescape(l[:keyEnd])
	if err != nil {
		return "", "", err
	}
	val, err := unescape(trimLeft(l[valStart:]))
	if err != nil {
		return "", "", err
	}
	return key, val, nil
}

func unescape(b []byte) (string, error) {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(b) {
			break // a lone trailing backslash is dropped, as in Java
		}
		switch e := b[i]; e {
		case 't':
			out = append(out, '\t')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 'f':
			out = append(out, '\f')
		case 'u':
			if i+5 > len(b) {
				return "", fmt.Errorf("malformed \\uxxxx encoding")
			}
			v := rune(0)
			for _, h := range b[i+1 : i+5] {
				switch {
				case h >= '0' && h <= '9':
					v = v<<4 | rune(h-'0')
				case h >= 'a' && h <= 'f':
					v = v<<4 | rune(h-'a'+10)
				case h >= 'A' && h <= 'F':
					v = v<<4 | rune(h-'A'+10)
				default:
					return "", fmt.Errorf("malformed \\uxxxx encoding")
				}
			}
			i += 4
			// Join a UTF-16 surrogate pair written as two escapes.
			if v >= 0xD800 && v < 0xDC00 && i+6 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
				lo := rune(0)
				ok := true
				for _, h := range b[i+3 : i+7] {
					switch {
					case h >= '0' && h <= '9':
						lo = lo<<4 | rune(h-'0')
					case h >= 'a' && h <= 'f':
						lo = lo<<4 | rune(h-'a'+10)
					case h >= 'A' && h <= 'F':
						lo = lo<<4 | rune(h-'A'+10)
					default:
						ok = false
					}
				}
				if ok && lo >= 0xDC00 && lo < 0xE000 {
					v = 0x10000 + (v-0xD800)<<10 + (lo - 0xDC00)
					i += 6
				}
			}
			out = utf8.AppendRune(out, v)
		default:
			out = append(out, e)
		}
	}
	return string(out), nil
}

// Append writes props as Properties.store would (without its date
// comment): key=value lines with separators, comment starters, leading
// blanks and control characters escaped, so Parse reads them back
// unchanged. Non-ASCII stays raw UTF-8.
func Append(dst []byte, p Props) []byte {
	for _, e := range p {
		dst = appendEscaped(dst, e.Key, true)
		dst = append(dst, '=')
		dst = appendEscaped(dst, e.Value, false)
		dst = append(dst, '\n')
	}
	return dst
}

const hexUpper = "0123456789ABCDEF"

func appendEscaped(dst []byte, s string, isKey bool) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ':
			if i == 0 || isKey {
				dst = append(dst, '\\')
			}
			dst = append(dst, ' ')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\f':
			dst = append(dst, '\\', 'f')
		case c == '=' || c == ':' || c == '#' || c == '!' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20 || c == 0x7F:
			dst = append(dst, '\\', 'u', '0', '0', hexUpper[c>>4], hexUpper[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// AppendPlain writes key=value lines with no escaping, as RocketMQ's
// MixAll.properties2String and its -p option print them.
func AppendPlain(dst []byte, p Props) []byte {
	for _, e := range p {
		dst = append(dst, e.Key...)
		dst = append(dst, '=')
		dst = append(dst, e.Value...)
		dst = append(dst, '\n')
	}
	return dst
}
