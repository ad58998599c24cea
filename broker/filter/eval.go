package filter

import (
	"strings"

	"github.com/rocketgo/rocketgo/codec/message"
)

// Result is the outcome of evaluating an expression against one message.
type Result uint8

const (
	// False: the expression is false; the message does not match.
	False Result = iota
	// True: the message matches.
	True
	// Unknown: the expression is NULL (a property it needs is absent); the
	// message does not match.
	Unknown
	// Failed: Java would have thrown (a property that does not convert to
	// the number it is compared with); the message does not match.
	Failed
)

func (r Result) String() string {
	switch r {
	case False:
		return "FALSE"
	case True:
		return "TRUE"
	case Unknown:
		return "UNKNOWN"
	}
	return "FAILED"
}

// maxSlots is how many distinct properties an expression may name and
// still have them all collected in one pass over the properties string.
const maxSlots = 16

// evalCtx holds the property values of one message; it lives on the stack.
type evalCtx struct {
	props string
	vals  [maxSlots]string
	found uint32
	slots bool // vals/found are in use (else each lookup scans props)
}

func (c *evalCtx) get(n *node) value {
	if c.slots {
		if c.found&(1<<n.slot) == 0 {
			return vNull
		}
		return value{k: kString, s: c.vals[n.slot]}
	}
	if v, ok := message.Property(c.props, n.name); ok {
		return value{k: kString, s: v}
	}
	return vNull
}

// Match reports whether a message with the given properties string
// (name 0x01 value 0x02 ...) passes the filter. It does not allocate.
func (e *Expr) Match(props string) bool { return e.Evaluate(props) == True }

// MatchRecord is Match on a stored record (the commit-log layout); a record
// that does not decode does not match. It suits store.Filter.Record.
func (e *Expr) MatchRecord(record []byte) bool {
	var m message.Ext
	if message.Decode(record, &m) != nil {
		return false
	}
	return e.Match(m.Properties)
}

// Evaluate runs the expression against a properties string.
func (e *Expr) Evaluate(props string) Result {
	var c evalCtx
	c.props = props
	if len(e.names) <= maxSlots {
		c.slots = true
		if len(e.names) > 0 {
			it := message.IterProperties(props)
			for {
				name, val, ok := it.Next()
				if !ok {
					break
				}
				for i, want := range e.names {
					if name == want {
						// The last occurrence wins, as with Java's HashMap.
						c.vals[i] = val
						c.found |= 1 << i
						break
					}
				}
			}
		}
	}
	v := eval(e.root, &c)
	switch v.k {
	case kBool:
		if v.b {
			return True
		}
		return False
	case kNull:
		return Unknown
	}
	return Failed
}

// eval mirrors the evaluate methods of Java's expression classes. kErr
// stands for a thrown exception: it propagates through every operator that
// evaluates the failing operand.
func eval(n *node, c *evalCtx) value {
	switch n.op {
	case opConst:
		return n.val
	case opProp:
		return c.get(n)
	case opNeg:
		v := eval(n.l, c)
		switch v.k {
		case kErr:
			return v
		case kInt:
			return value{k: kInt, i: int64(-int32(v.i))}
		case kLong:
			return value{k: kLong, i: -v.i}
		case kDouble:
			return value{k: kDouble, f: -v.f}
		}
		return vNull
	case opNot:
		v := eval(n.l, c)
		switch v.k {
		case kBool:
			return boolValue(!v.b)
		case kNull:
			return vNull
		}
		return vErr
	case opCast:
		v := eval(n.l, c)
		switch v.k {
		case kNull, kBool, kErr:
			return v
		}
		return vFalse
	case opAnd:
		l := eval(n.l, c)
		if !isLogical(l) {
			return vErr
		}
		if l.k == kBool && !l.b {
			return vFalse
		}
		r := eval(n.r, c)
		if !isLogical(r) {
			return vErr
		}
		if r.k == kBool && !r.b {
			return vFalse
		}
		if l.k == kNull || r.k == kNull {
			return vNull
		}
		return vTrue
	case opOr:
		l := eval(n.l, c)
		if !isLogical(l) {
			return vErr
		}
		if l.k == kBool && l.b {
			return vTrue
		}
		r := eval(n.r, c)
		if !isLogical(r) {
			return vErr
		}
		if r.k == kBool && r.b {
			return vTrue
		}
		if l.k == kNull || r.k == kNull {
			return vNull
		}
		return vFalse
	case opEq:
		l := eval(n.l, c)
		if l.k == kErr {
			return l
		}
		r := eval(n.r, c)
		if r.k == kErr {
			return r
		}
		// compat: NULL = NULL is TRUE (that is how IS NULL works); NULL on
		// the left only is unknown, on the right only FALSE.
		switch {
		case l.k == kNull && r.k == kNull:
			return vTrue
		case l.k == kNull:
			return vNull
		case r.k == kNull:
			return vFalse
		}
		cmp, ok := javaCompare(l, r)
		if !ok {
			return vErr
		}
		return boolValue(cmp == 0)
	case opGt, opGe, opLt, opLe:
		return relational(n, c)
	case opIn:
		v := eval(n.l, c)
		switch v.k {
		case kErr:
			return v
		case kString:
		default:
			return vNull
		}
		found := false
		if n.set != nil {
			_, found = n.set[v.s]
		} else {
			for _, s := range n.list {
				if s == v.s {
					found = true
					break
				}
			}
		}
		return boolValue(found != n.not)
	case opContains, opStartsWith, opEndsWith:
		// compat: an empty search string is FALSE, for the NOT forms too,
		// and before the operand is looked at.
		if n.search == "" {
			return vFalse
		}
		v := eval(n.l, c)
		switch v.k {
		case kErr:
			return v
		case kString:
		default:
			return vFalse // compat: a missing property is FALSE here, not NULL
		}
		var hit bool
		switch n.op {
		case opContains:
			hit = strings.Contains(v.s, n.search)
		case opStartsWith:
			hit = strings.HasPrefix(v.s, n.search)
		default:
			hit = strings.HasSuffix(v.s, n.search)
		}
		return boolValue(hit != n.not)
	}
	return vErr
}

// relational evaluates > >= < <=: NULL on either side is unknown (the right
// side is not evaluated when the left is NULL); two strings are compared as
// doubles or fail.
func relational(n *node, c *evalCtx) value {
	l := eval(n.l, c)
	if l.k == kErr || l.k == kNull {
		return l
	}
	r := eval(n.r, c)
	if r.k == kErr || r.k == kNull {
		return r
	}
	var cmp int
	if l.k == kString && r.k == kString {
		lf, ok1 := parseJavaDouble(l.s)
		rf, ok2 := parseJavaDouble(r.s)
		if !ok1 || !ok2 {
			return vErr
		}
		cmp = javaDoubleCompare(lf, rf)
	} else {
		var ok bool
		if cmp, ok = javaCompare(l, r); !ok {
			return vErr
		}
	}
	switch n.op {
	case opGt:
		return boolValue(cmp > 0)
	case opGe:
		return boolValue(cmp >= 0)
	case opLt:
		return boolValue(cmp < 0)
	}
	return boolValue(cmp <= 0)
}

// isLogical reports whether v is an operand AND/OR accept (Java casts it to
// Boolean; anything else, or an exception, fails the expression).
func isLogical(v value) bool { return v.k == kBool || v.k == kNull }
