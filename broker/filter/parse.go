package filter

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Language names of Java's ExpressionType.
const (
	TypeTag   = "TAG"
	TypeSQL92 = "SQL92"
)

// IsTagType reports whether an expression type means TAG filtering (Java
// ExpressionType.isTagType: empty or "TAG").
func IsTagType(t string) bool { return t == "" || t == TypeTag }

// maxDepth bounds parser recursion and the height of a compiled tree, so
// that hostile input neither exhausts the stack nor makes evaluation
// recurse without limit (Java fails such input with StackOverflowError,
// which its parser reports as an invalid selector).
const maxDepth = 2048

// ParseError is an invalid SQL92 expression; Error() is meant as the
// remark of a SUBSCRIPTION_PARSE_FAILED response.
type ParseError struct {
	Expr string
	Pos  int // byte offset of the offending token
	Msg  string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("invalid SQL92 expression at column %d: %s", e.Pos+1, e.Msg)
}

type op uint8

const (
	opConst op = iota
	opProp
	opNeg
	opNot
	opCast // a property used as a boolean
	opAnd
	opOr
	opEq
	opGt
	opGe
	opLt
	opLe
	opIn
	opContains
	opStartsWith
	opEndsWith
)

// node is one operator of a compiled expression.
type node struct {
	op     op
	not    bool // NOT IN, NOT CONTAINS, NOT STARTSWITH, NOT ENDSWITH
	height int32
	l, r   *node
	val    value               // opConst
	name   string              // opProp
	slot   int                 // opProp: index into Expr.names
	search string              // opContains, opStartsWith, opEndsWith
	list   []string            // opIn, short lists
	set    map[string]struct{} // opIn, long lists
}

// Expr is a compiled SQL92 expression. It is immutable and safe for
// concurrent use.
type Expr struct {
	src   string
	root  *node
	names []string // distinct property names, indexed by node.slot
}

// String returns the source text.
func (e *Expr) String() string { return e.src }

// Compile parses a SQL92 expression. The returned Expr does not alias expr.
func Compile(expr string) (*Expr, error) {
	src := strings.Clone(expr)
	p := &parser{lx: lexer{src: src}, src: src, slots: map[string]int{}}
	root, err := p.orExpr()
	if err == nil {
		root, err = p.asBool(root, 0)
	}
	if err == nil && p.err != nil {
		// compat: Java's grammar has no end-of-input rule, so tokens after a
		// complete expression are ignored — but the one token it peeked at
		// must still be lexically valid.
		err = p.err
	}
	if err != nil {
		return nil, err
	}
	return &Expr{src: src, root: root, names: p.names}, nil
}

type parser struct {
	lx    lexer
	src   string
	buf   [2]token
	n     int         // buffered tokens
	err   *ParseError // first lexical error, sticky
	depth int
	slots map[string]int
	names []string
}

func (p *parser) peekN(i int) token {
	for p.n <= i {
		t, msg := p.lx.next()
		if t.kind == tErr && p.err == nil {
			p.err = &ParseError{Expr: p.src, Pos: t.pos, Msg: msg}
		}
		p.buf[p.n] = t
		p.n++
	}
	return p.buf[i]
}

func (p *parser) peek() token { return p.peekN(0) }

func (p *parser) advance() token {
	t := p.peekN(0)
	p.buf[0] = p.buf[1]
	p.n--
	return t
}

// fail reports an error at pos, unless a lexical error came first (Java's
// token manager throws as soon as it reads a bad token).
func (p *parser) fail(pos int, format string, args ...any) error {
	if p.err != nil {
		return p.err
	}
	return &ParseError{Expr: p.src, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) unexpected(t token, want string) error {
	found := t.kind.String()
	if t.kind != tEOF && t.text != "" {
		found = quoteSnippet(t.text)
	}
	return p.fail(t.pos, "expected %s, found %s", want, found)
}

func quoteSnippet(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return strconv.Quote(s)
}

func (p *parser) expect(k tokKind) (token, error) {
	t := p.peek()
	if t.kind != k {
		return t, p.unexpected(t, k.String())
	}
	return p.advance(), nil
}

// mk builds a node and enforces the height bound.
func (p *parser) mk(pos int, n *node) (*node, error) {
	h := int32(0)
	if n.l != nil {
		h = n.l.height
	}
	if n.r != nil && n.r.height > h {
		h = n.r.height
	}
	n.height = h + 1
	if n.height > maxDepth {
		return nil, p.fail(pos, "expression is nested too deeply (more than %d levels)", maxDepth)
	}
	return n, nil
}

func (p *parser) orExpr() (*node, error) {
	left, err := p.andExpr()
	for err == nil && p.peek().kind == tOr {
		t := p.advance()
		var right *node
		if right, err = p.andExpr(); err != nil {
			break
		}
		left, err = p.logic(opOr, t.pos, left, right)
	}
	return left, err
}

func (p *parser) andExpr() (*node, error) {
	left, err := p.eqExpr()
	for err == nil && p.peek().kind == tAnd {
		t := p.advance()
		var right *node
		if right, err = p.eqExpr(); err != nil {
			break
		}
		left, err = p.logic(opAnd, t.pos, left, right)
	}
	return left, err
}

func (p *parser) logic(o op, pos int, l, r *node) (*node, error) {
	l, err := p.asBool(l, pos)
	if err != nil {
		return nil, err
	}
	if r, err = p.asBool(r, pos); err != nil {
		return nil, err
	}
	return p.mk(pos, &node{op: o, l: l, r: r})
}

func (p *parser) eqExpr() (*node, error) {
	left, err := p.cmpExpr()
	for err == nil {
		t := p.peek()
		switch t.kind {
		case tEq, tNe:
			p.advance()
			var right *node
			if right, err = p.cmpExpr(); err != nil {
				return nil, err
			}
			if left, err = p.equal(t.pos, left, right); err == nil && t.kind == tNe {
				left, err = p.mk(t.pos, &node{op: opNot, l: left})
			}
		case tIs:
			p.advance()
			not := false
			if p.peek().kind == tNot {
				p.advance()
				not = true
			}
			if _, err = p.expect(tNull); err != nil {
				return nil, err
			}
			// IS NULL is an equality with NULL that skips the operand checks.
			left, err = p.mk(t.pos, &node{op: opEq, l: left, r: &node{op: opConst, val: vNull, height: 1}})
			if err == nil && not {
				left, err = p.mk(t.pos, &node{op: opNot, l: left})
			}
		default:
			return left, nil
		}
	}
	return nil, err
}

func (p *parser) cmpExpr() (*node, error) {
	left, err := p.unary()
	for err == nil {
		t := p.peek()
		not := false
		k := t.kind
		if k == tNot {
			// NOT here must start NOT CONTAINS/STARTSWITH/ENDSWITH/BETWEEN/IN.
			switch k = p.peekN(1).kind; k {
			case tContains, tStartsWith, tEndsWith, tBetween, tIn:
				p.advance()
				not = true
			default:
				return nil, p.unexpected(p.peekN(1), "CONTAINS, STARTSWITH, ENDSWITH, BETWEEN or IN after NOT")
			}
		}
		switch k {
		case tGt, tGe, tLt, tLe:
			p.advance()
			var right *node
			if right, err = p.unary(); err != nil {
				return nil, err
			}
			left, err = p.relational(relOp[k-tGt], t.pos, left, right)
		case tContains, tStartsWith, tEndsWith:
			p.advance()
			var s string
			if s, err = p.stringLit(); err != nil {
				return nil, err
			}
			left, err = p.mk(t.pos, &node{op: opContains + op(k-tContains), not: not, l: left, search: s})
		case tBetween:
			p.advance()
			left, err = p.between(t.pos, left, not)
		case tIn:
			p.advance()
			left, err = p.in(t.pos, left, not)
		default:
			return left, nil
		}
	}
	return nil, err
}

var relOp = [...]op{tGt - tGt: opGt, tGe - tGt: opGe, tLt - tGt: opLt, tLe - tGt: opLe}

func (p *parser) between(pos int, v *node, not bool) (*node, error) {
	lo, err := p.unary()
	if err != nil {
		return nil, err
	}
	if _, err = p.expect(tAnd); err != nil {
		return nil, err
	}
	hi, err := p.unary()
	if err != nil {
		return nil, err
	}
	if not {
		// NOT BETWEEN lo AND hi is v < lo OR v > hi, without the bounds check.
		l, err := p.relational(opLt, pos, v, lo)
		if err != nil {
			return nil, err
		}
		r, err := p.relational(opGt, pos, v, hi)
		if err != nil {
			return nil, err
		}
		return p.mk(pos, &node{op: opOr, l: l, r: r})
	}
	if lo.op == opConst && hi.op == opConst {
		if lo.val.k == kNull || hi.val.k == kNull {
			return nil, p.fail(pos, "illegal values of BETWEEN: values can not be NULL")
		}
		c, ok := javaCompare(hi.val, lo.val)
		if !ok {
			return nil, p.fail(pos, "illegal values of BETWEEN: %s and %s cannot be compared", lo.val, hi.val)
		}
		if c < 0 {
			return nil, p.fail(pos, "illegal values of BETWEEN: lower bound %s is greater than upper bound %s", lo.val, hi.val)
		}
	}
	l, err := p.relational(opGe, pos, v, lo)
	if err != nil {
		return nil, err
	}
	r, err := p.relational(opLe, pos, v, hi)
	if err != nil {
		return nil, err
	}
	return p.mk(pos, &node{op: opAnd, l: l, r: r})
}

func (p *parser) in(pos int, v *node, not bool) (*node, error) {
	if _, err := p.expect(tLParen); err != nil {
		return nil, err
	}
	var list []string
	for {
		s, err := p.stringLit()
		if err != nil {
			return nil, err
		}
		list = append(list, s)
		if p.peek().kind != tComma {
			break
		}
		p.advance()
	}
	if _, err := p.expect(tRParen); err != nil {
		return nil, err
	}
	if v.op != opProp {
		return nil, p.fail(pos, "IN needs a property on its left, got %s", v)
	}
	n := &node{op: opIn, not: not, l: v}
	if len(list) > 8 {
		n.set = make(map[string]struct{}, len(list))
		for _, s := range list {
			n.set[s] = struct{}{}
		}
	} else {
		n.list = list
	}
	return p.mk(pos, n)
}

func (p *parser) stringLit() (string, error) {
	t, err := p.expect(tString)
	if err != nil {
		return "", err
	}
	inner := t.text[1 : len(t.text)-1]
	if !strings.Contains(inner, "''") {
		return inner, nil
	}
	return strings.ReplaceAll(inner, "''", "'"), nil
}

func (p *parser) unary() (*node, error) {
	t := p.peek()
	switch t.kind {
	case tPlus, tMinus, tNot:
		p.advance()
		if p.depth++; p.depth > maxDepth {
			return nil, p.fail(t.pos, "expression is nested too deeply (more than %d levels)", maxDepth)
		}
		x, err := p.unary()
		p.depth--
		if err != nil {
			return nil, err
		}
		switch t.kind {
		case tPlus:
			return x, nil
		case tMinus:
			return p.mk(t.pos, &node{op: opNeg, l: x})
		}
		if x, err = p.asBool(x, t.pos); err != nil {
			return nil, err
		}
		return p.mk(t.pos, &node{op: opNot, l: x})
	}
	return p.primary()
}

func (p *parser) primary() (*node, error) {
	t := p.peek()
	switch t.kind {
	case tString:
		s, err := p.stringLit()
		if err != nil {
			return nil, err
		}
		return &node{op: opConst, val: value{k: kString, s: s}, height: 1}, nil
	case tDecimal:
		p.advance()
		v, err := p.decimal(t)
		if err != nil {
			return nil, err
		}
		return &node{op: opConst, val: v, height: 1}, nil
	case tFloat:
		p.advance()
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil && !isRangeErr(err) {
			return nil, p.fail(t.pos, "invalid float literal %s", t.text)
		}
		// compat: Java rejects literals that overflow and, oddly, those
		// below Double.MIN_VALUE — zero included.
		if f > math.MaxFloat64 {
			return nil, p.fail(t.pos, "float literal %s is greater than 1.7976931348623157E308", t.text)
		}
		if f < math.SmallestNonzeroFloat64 {
			return nil, p.fail(t.pos, "float literal %s is less than 4.9E-324", t.text)
		}
		return &node{op: opConst, val: value{k: kDouble, f: f}, height: 1}, nil
	case tTrue, tFalse:
		p.advance()
		return &node{op: opConst, val: boolValue(t.kind == tTrue), height: 1}, nil
	case tNull:
		p.advance()
		return &node{op: opConst, val: vNull, height: 1}, nil
	case tID:
		p.advance()
		slot, ok := p.slots[t.text]
		if !ok {
			slot = len(p.names)
			p.slots[t.text] = slot
			p.names = append(p.names, t.text)
		}
		return &node{op: opProp, name: t.text, slot: slot, height: 1}, nil
	case tLParen:
		p.advance()
		if p.depth++; p.depth > maxDepth {
			return nil, p.fail(t.pos, "expression is nested too deeply (more than %d levels)", maxDepth)
		}
		x, err := p.orExpr()
		p.depth--
		if err != nil {
			return nil, err
		}
		if _, err = p.expect(tRParen); err != nil {
			return nil, err
		}
		return x, nil
	}
	return nil, p.unexpected(t, "an expression")
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// decimal converts an integer literal: Integer when it fits 32 bits,
// otherwise Long; beyond 64 bits it is an error.
func (p *parser) decimal(t token) (value, error) {
	text := strings.TrimRight(t.text, "lL")
	n, ok := parseJavaInt(text, 64)
	if !ok {
		return value{}, p.fail(t.pos, "integer literal %s is out of range", t.text)
	}
	if n >= math.MinInt32 && n <= math.MaxInt32 {
		return value{k: kInt, i: n}, nil
	}
	return value{k: kLong, i: n}, nil
}

// isBool reports whether Java would build n as a BooleanExpression.
func isBool(n *node) bool {
	switch n.op {
	case opConst:
		return n.val.k == kBool || n.val.k == kNull
	case opProp, opNeg:
		return false
	}
	return true
}

// asBool is Java's asBooleanExpression: a property becomes a boolean cast;
// other non-boolean operands are rejected.
func (p *parser) asBool(n *node, pos int) (*node, error) {
	if isBool(n) {
		return n, nil
	}
	if n.op == opProp {
		return p.mk(pos, &node{op: opCast, l: n})
	}
	return nil, p.fail(pos, "expression will not result in a boolean value: %s", n)
}

// equal is Java's createEqual with its operand checks.
func (p *parser) equal(pos int, l, r *node) (*node, error) {
	for _, x := range [2]*node{l, r} {
		if x.op == opConst && x.val.k == kNull {
			return nil, p.fail(pos, "NULL cannot be compared with =, use IS NULL")
		}
	}
	if l.op == opConst && r.op == opConst && isBool(l) && !isBool(r) {
		return nil, p.fail(pos, "%s cannot be compared with %s", l, r)
	}
	return p.mk(pos, &node{op: opEq, l: l, r: r})
}

// relational is Java's createGreaterThan & co. with their operand checks:
// constants must be numbers and boolean expressions are refused.
func (p *parser) relational(o op, pos int, l, r *node) (*node, error) {
	for _, x := range [2]*node{l, r} {
		if x.op == opConst && x.val.k != kInt && x.val.k != kLong && x.val.k != kDouble || x.op != opConst && isBool(x) {
			return nil, p.fail(pos, "value %s cannot be compared with >, >=, < or <=", x)
		}
	}
	return p.mk(pos, &node{op: o, l: l, r: r})
}

var opSymbols = [...]string{
	opAnd: "AND", opOr: "OR", opEq: "=", opGt: ">", opGe: ">=", opLt: "<", opLe: "<=",
	opContains: "CONTAINS", opStartsWith: "STARTSWITH", opEndsWith: "ENDSWITH", opIn: "IN",
}

// String renders n for error messages (fully parenthesized).
func (n *node) String() string {
	switch n.op {
	case opConst:
		return n.val.String()
	case opProp:
		return n.name
	case opNeg:
		return "(-" + n.l.String() + ")"
	case opNot:
		return "(NOT " + n.l.String() + ")"
	case opCast:
		return n.l.String()
	case opContains, opStartsWith, opEndsWith:
		return "(" + n.l.String() + notWord(n.not) + opSymbols[n.op] + " " + value{k: kString, s: n.search}.String() + ")"
	case opIn:
		var b strings.Builder
		b.WriteString("(" + n.l.String() + notWord(n.not) + "IN (")
		items := n.list
		if n.set != nil {
			items = make([]string, 0, len(n.set))
			for s := range n.set {
				items = append(items, s)
			}
		}
		for i, s := range items {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(value{k: kString, s: s}.String())
		}
		b.WriteString("))")
		return b.String()
	}
	return "(" + n.l.String() + " " + opSymbols[n.op] + " " + n.r.String() + ")"
}

func notWord(not bool) string {
	if not {
		return " NOT "
	}
	return " "
}
