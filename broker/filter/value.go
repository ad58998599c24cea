package filter

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// kind is the Java class of a runtime value.
type kind uint8

const (
	kNull   kind = iota
	kBool        // java.lang.Boolean
	kInt         // java.lang.Integer (i holds an int32)
	kLong        // java.lang.Long
	kDouble      // java.lang.Double
	kString      // java.lang.String
	kErr         // an exception was thrown; the expression fails
)

// value is one evaluated operand. It is passed by value so that evaluation
// never allocates.
type value struct {
	k kind
	b bool
	i int64
	f float64
	s string
}

var (
	vNull  = value{k: kNull}
	vTrue  = value{k: kBool, b: true}
	vFalse = value{k: kBool}
	vErr   = value{k: kErr}
)

func boolValue(b bool) value {
	if b {
		return vTrue
	}
	return vFalse
}

func (v value) String() string {
	switch v.k {
	case kNull:
		return "NULL"
	case kBool:
		if v.b {
			return "TRUE"
		}
		return "FALSE"
	case kInt, kLong:
		return strconv.FormatInt(v.i, 10)
	case kDouble:
		return strconv.FormatFloat(v.f, 'g', -1, 64)
	case kString:
		return "'" + strings.ReplaceAll(v.s, "'", "''") + "'"
	}
	return "<error>"
}

// javaCompare compares two non-null values the way the Java filter's
// ComparisonExpression.__compare does with string conversion enabled:
// operands of different classes are converted (Integer→Long→Double, a
// String to the other side's class); a class pair it cannot convert
// compares as -1. ok is false when Java would throw (a string that does not
// parse, or Boolean compared with String).
func javaCompare(l, r value) (c int, ok bool) {
	if l.k != r.k {
		switch l.k {
		case kBool:
			if r.k == kString {
				// compat: Java casts the Boolean operand to String here and
				// throws ClassCastException.
				return 0, false
			}
			return -1, true
		case kInt:
			switch r.k {
			case kLong:
				l.k = kLong
			case kDouble:
				l = value{k: kDouble, f: float64(l.i)}
			case kString:
				n, ok := parseJavaInt(r.s, 32)
				if !ok {
					return 0, false
				}
				r = value{k: kInt, i: n}
			default:
				return -1, true
			}
		case kLong:
			switch r.k {
			case kInt:
				r.k = kLong
			case kDouble:
				l = value{k: kDouble, f: float64(l.i)}
			case kString:
				n, ok := parseJavaInt(r.s, 64)
				if !ok {
					return 0, false
				}
				r = value{k: kLong, i: n}
			default:
				return -1, true
			}
		case kDouble:
			switch r.k {
			case kInt, kLong:
				r = value{k: kDouble, f: float64(r.i)}
			case kString:
				f, ok := parseJavaDouble(r.s)
				if !ok {
					return 0, false
				}
				r = value{k: kDouble, f: f}
			default:
				return -1, true
			}
		case kString:
			switch r.k {
			case kBool:
				l = boolValue(javaBoolean(l.s))
			case kInt, kLong:
				bits := 32
				if r.k == kLong {
					bits = 64
				}
				n, ok := parseJavaInt(l.s, bits)
				if !ok {
					return 0, false
				}
				l = value{k: r.k, i: n}
			case kDouble:
				f, ok := parseJavaDouble(l.s)
				if !ok {
					return 0, false
				}
				l = value{k: kDouble, f: f}
			default:
				return -1, true
			}
		default:
			return -1, true
		}
	}
	switch l.k {
	case kBool:
		switch {
		case l.b == r.b:
			return 0, true
		case r.b:
			return -1, true
		}
		return 1, true
	case kInt, kLong:
		switch {
		case l.i < r.i:
			return -1, true
		case l.i > r.i:
			return 1, true
		}
		return 0, true
	case kDouble:
		return javaDoubleCompare(l.f, r.f), true
	case kString:
		// Only zero versus non-zero is observable: relational operators
		// convert strings to doubles first.
		return strings.Compare(l.s, r.s), true
	}
	return -1, true
}

// javaDoubleCompare is Double.compare: -0.0 < 0.0, and NaN is equal to
// itself and greater than everything else.
func javaDoubleCompare(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	ab, bb := javaDoubleBits(a), javaDoubleBits(b)
	switch {
	case ab == bb:
		return 0
	case ab < bb:
		return -1
	}
	return 1
}

// javaDoubleBits is Double.doubleToLongBits (one canonical NaN).
func javaDoubleBits(f float64) int64 {
	if f != f {
		return 0x7ff8000000000000
	}
	return int64(math.Float64bits(f))
}

// javaBoolean is Boolean.valueOf(String).
func javaBoolean(s string) bool { return strings.EqualFold(s, "true") }

// parseJavaInt is Integer.parseInt (bits 32) or Long.parseLong (bits 64):
// an optional sign and at least one digit, nothing else, in range. Like
// Java (Character.digit) it accepts any BMP decimal digit, such as "٣".
func parseJavaInt(s string, bits int) (int64, bool) {
	if s == "" {
		return 0, false
	}
	neg := false
	switch s[0] {
	case '-':
		neg, s = true, s[1:]
	case '+':
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	limit := uint64(1)<<(bits-1) - 1 // max positive
	if neg {
		limit++
	}
	var n uint64
	for i := 0; i < len(s); {
		d := int(s[i]) - '0'
		if s[i] < utf8.RuneSelf {
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			i += size
			d = javaDigit(r)
		}
		if d < 0 || d > 9 {
			return 0, false
		}
		if n > (limit-uint64(d))/10 {
			return 0, false
		}
		n = n*10 + uint64(d)
	}
	if neg {
		return -int64(n), true
	}
	return int64(n), true
}

// parseJavaDouble is Double.valueOf(String): surrounding characters up to
// U+0020 are trimmed; an optional sign; "NaN", "Infinity", a decimal
// number or a hexadecimal one with a binary exponent; an optional
// f/F/d/D suffix. It does not allocate for well-formed input.
func parseJavaDouble(s string) (float64, bool) {
	s = javaTrim(s)
	body := s
	neg := false
	if len(body) > 0 && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	switch body {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		if neg {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	if !javaFloatSyntax(body) {
		return 0, false
	}
	// A valid literal ends in a digit unless it carries a type suffix
	// (hex exponents are decimal digits).
	if isTypeSuffix(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		// Out of range: Java yields ±Infinity or zero as ParseFloat does.
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, true
		}
		return 0, false
	}
	return f, true
}

// javaFloatSyntax checks an unsigned Java floating-point literal (without
// NaN/Infinity), type suffix included.
func javaFloatSyntax(s string) bool {
	i := 0
	digitsFrom := func(i int, hex bool) int {
		for i < len(s) && (isDigit(s[i]) || hex && isHexLetter(s[i])) {
			i++
		}
		return i
	}
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		i = 2
		j := digitsFrom(i, true)
		n := j - i
		if j < len(s) && s[j] == '.' {
			k := digitsFrom(j+1, true)
			n += k - j - 1
			j = k
		}
		if n == 0 || j >= len(s) || s[j] != 'p' && s[j] != 'P' {
			return false
		}
		i = j + 1
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j = digitsFrom(i, false)
		if j == i {
			return false
		}
		return j == len(s) || j == len(s)-1 && isTypeSuffix(s[j])
	}
	j := digitsFrom(0, false)
	n := j
	if j < len(s) && s[j] == '.' {
		k := digitsFrom(j+1, false)
		n += k - j - 1
		j = k
	}
	if n == 0 {
		return false
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		j++
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := digitsFrom(j, false)
		if k == j {
			return false
		}
		j = k
	}
	return j == len(s) || j == len(s)-1 && isTypeSuffix(s[j])
}

func isHexLetter(c byte) bool { return c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func isTypeSuffix(c byte) bool { return c == 'f' || c == 'F' || c == 'd' || c == 'D' }

// javaTrim is String.trim: it strips characters up to U+0020 at both ends.
func javaTrim(s string) string {
	for len(s) > 0 && s[0] <= ' ' {
		s = s[1:]
	}
	for len(s) > 0 && s[len(s)-1] <= ' ' {
		s = s[:len(s)-1]
	}
	return s
}

// javaDigit is Character.digit(ch, 10) for a non-ASCII rune, or -1. Java
// parses UTF-16 units, so only the Basic Multilingual Plane counts. Unicode
// keeps decimal digits in runs of ten starting at zero, so a digit's value
// is its distance from the start of its run.
func javaDigit(r rune) int {
	if r >= 0x10000 || r == utf8.RuneError {
		return -1
	}
	for _, rg := range unicode.Nd.R16 {
		if uint16(r) < rg.Lo {
			return -1
		}
		if uint16(r) <= rg.Hi {
			if rg.Stride != 1 {
				return -1
			}
			return int(uint16(r)-rg.Lo) % 10
		}
	}
	return -1
}
