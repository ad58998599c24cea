package filter

import "strings"

type tokKind uint8

const (
	tEOF tokKind = iota
	tErr         // lexical error; the parser's err holds the detail
	// keywords (case-insensitive)
	tNot
	tAnd
	tOr
	tBetween
	tIn
	tTrue
	tFalse
	tNull
	tIs
	tContains
	tStartsWith
	tEndsWith
	// literals and names
	tDecimal
	tFloat
	tString
	tID
	// punctuation
	tEq
	tNe
	tGt
	tGe
	tLt
	tLe
	tLParen
	tComma
	tRParen
	tPlus
	tMinus
)

var keywords = [...]struct {
	word string
	kind tokKind
}{
	{"NOT", tNot}, {"AND", tAnd}, {"OR", tOr}, {"BETWEEN", tBetween},
	{"IN", tIn}, {"TRUE", tTrue}, {"FALSE", tFalse}, {"NULL", tNull},
	{"IS", tIs}, {"CONTAINS", tContains}, {"STARTSWITH", tStartsWith},
	{"ENDSWITH", tEndsWith},
}

var tokNames = [...]string{
	tEOF: "end of expression", tErr: "invalid input",
	tNot: "NOT", tAnd: "AND", tOr: "OR", tBetween: "BETWEEN", tIn: "IN",
	tTrue: "TRUE", tFalse: "FALSE", tNull: "NULL", tIs: "IS",
	tContains: "CONTAINS", tStartsWith: "STARTSWITH", tEndsWith: "ENDSWITH",
	tDecimal: "integer literal", tFloat: "float literal",
	tString: "string literal", tID: "identifier",
	tEq: `"="`, tNe: `"<>"`, tGt: `">"`, tGe: `">="`, tLt: `"<"`, tLe: `"<="`,
	tLParen: `"("`, tComma: `","`, tRParen: `")"`, tPlus: `"+"`, tMinus: `"-"`,
}

func (k tokKind) String() string { return tokNames[k] }

// token is one lexeme; text aliases the source (string literals are
// decoded by the parser).
type token struct {
	kind tokKind
	pos  int // byte offset in the source
	text string
}

// lexer splits the source on demand, as JavaCC's token manager does: the
// parser asks for tokens only as far as the grammar looks ahead, so input
// after a complete expression is never examined beyond one token.
type lexer struct {
	src string
	pos int
	// noBreak is 1 + the offset from which src has no line break (0:
	// not known yet); it keeps a run of dashes from rescanning the tail.
	noBreak int
}

func isIDStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$'
}

func isIDPart(c byte) bool { return isIDStart(c) || isDigit(c) }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// skip passes white space and comments. A "--" comment counts only when a
// line break ends it (the grammar's LINE_COMMENT requires one); otherwise
// the dashes are minus signs.
func (lx *lexer) skip() {
	s := lx.src
	for lx.pos < len(s) {
		switch c := s[lx.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			lx.pos++
		case c == '-' && strings.HasPrefix(s[lx.pos:], "--"):
			// compat: a comment without a line break is not a comment.
			if lx.noBreak > 0 && lx.pos+1 >= lx.noBreak {
				return
			}
			end := strings.IndexAny(s[lx.pos:], "\n\r")
			if end < 0 {
				lx.noBreak = lx.pos + 1
				return
			}
			lx.pos += end + 1
		case c == '/' && strings.HasPrefix(s[lx.pos:], "/*"):
			end := strings.Index(s[lx.pos+2:], "*/")
			if end < 0 {
				return // "/" is then reported as an invalid character
			}
			lx.pos += 2 + end + 2
		default:
			return
		}
	}
}

// next returns the next token; on a lexical error it returns a tErr token
// and a message.
func (lx *lexer) next() (token, string) {
	lx.skip()
	s, p := lx.src, lx.pos
	if p >= len(s) {
		return token{kind: tEOF, pos: p}, ""
	}
	c := s[p]
	tok := func(k tokKind, n int) (token, string) {
		lx.pos = p + n
		return token{kind: k, pos: p, text: s[p : p+n]}, ""
	}
	switch {
	case isIDStart(c):
		n := 1
		for p+n < len(s) && isIDPart(s[p+n]) {
			n++
		}
		word := s[p : p+n]
		for _, kw := range keywords {
			if strings.EqualFold(word, kw.word) {
				return tok(kw.kind, n)
			}
		}
		return tok(tID, n)
	case isDigit(c) || c == '.':
		return lx.number()
	case c == '\'':
		for i := p + 1; i < len(s); i++ {
			if s[i] != '\'' {
				continue
			}
			if i+1 < len(s) && s[i+1] == '\'' {
				i++
				continue
			}
			return tok(tString, i+1-p)
		}
		return token{kind: tErr, pos: p}, "unterminated string literal"
	case c == '=':
		return tok(tEq, 1)
	case c == '<':
		if p+1 < len(s) && s[p+1] == '>' {
			return tok(tNe, 2)
		}
		if p+1 < len(s) && s[p+1] == '=' {
			return tok(tLe, 2)
		}
		return tok(tLt, 1)
	case c == '>':
		if p+1 < len(s) && s[p+1] == '=' {
			return tok(tGe, 2)
		}
		return tok(tGt, 1)
	case c == '(':
		return tok(tLParen, 1)
	case c == ')':
		return tok(tRParen, 1)
	case c == ',':
		return tok(tComma, 1)
	case c == '+':
		return tok(tPlus, 1)
	case c == '-':
		return tok(tMinus, 1)
	}
	return token{kind: tErr, pos: p}, "invalid character " + quoteChar(s[p:])
}

func quoteChar(s string) string {
	for _, r := range s {
		return "'" + string(r) + "'"
	}
	return "''"
}

// number scans the longest DECIMAL_LITERAL or FLOATING_POINT_LITERAL:
//
//	decimal: "0" | [1-9][0-9]* [lL]?
//	float:   [0-9]+ "." [0-9]* exp? | "." [0-9]+ exp? | [0-9]+ exp
//	exp:     [eE] [+-]? [0-9]+
func (lx *lexer) number() (token, string) {
	s, p := lx.src, lx.pos
	digits := func(i int) int {
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		return j - i
	}
	exp := func(i int) int {
		if i >= len(s) || s[i] != 'e' && s[i] != 'E' {
			return 0
		}
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if d := digits(j); d > 0 {
			return j + d - i
		}
		return 0
	}
	dec := 0
	if s[p] == '0' {
		dec = 1
	} else if s[p] != '.' {
		dec = digits(p)
		if p+dec < len(s) && (s[p+dec] == 'l' || s[p+dec] == 'L') {
			dec++
		}
	}
	flt := 0
	if s[p] == '.' {
		if d := digits(p + 1); d > 0 {
			flt = 1 + d
			flt += exp(p + flt)
		}
	} else {
		d := digits(p)
		if p+d < len(s) && s[p+d] == '.' {
			flt = d + 1
			flt += digits(p + flt)
			flt += exp(p + flt)
		} else if e := exp(p + d); e > 0 {
			flt = d + e
		}
	}
	switch {
	case flt > dec:
		lx.pos = p + flt
		return token{kind: tFloat, pos: p, text: s[p : p+flt]}, ""
	case dec > 0:
		lx.pos = p + dec
		return token{kind: tDecimal, pos: p, text: s[p : p+dec]}, ""
	}
	return token{kind: tErr, pos: p}, "invalid character '.'"
}
