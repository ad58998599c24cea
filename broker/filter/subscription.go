package filter

import "errors"

// ErrUnsupportedType is returned for an expression type that is neither
// TAG nor SQL92.
var ErrUnsupportedType = errors.New("filter: unsupported expression type")

// Subscription is one consumer subscription compiled for the pull path:
// MatchCode runs on consume-queue units, MatchRecord on the records that
// pass it.
type Subscription struct {
	Tag TagFilter // TAG subscriptions
	SQL *Expr     // SQL92 subscriptions; nil for TAG
}

// Subscription compiles a subscription as sent in a pull header
// (subscription, expressionType), both kinds through the cache (TAG
// expressions as ParseTagExpression parses them). An empty SQL92 expression is an error, as
// in Java's FilterAPI.build.
func (c *Cache) Subscription(typ, expr string) (Subscription, error) {
	if IsTagType(typ) {
		tf, err := c.Tag(expr)
		return Subscription{Tag: tf}, err
	}
	if typ != TypeSQL92 {
		return Subscription{}, ErrUnsupportedType
	}
	if expr == "" {
		return Subscription{}, &ParseError{Msg: "expression can not be empty"}
	}
	x, err := c.Compile(expr)
	if err != nil {
		return Subscription{}, err
	}
	return Subscription{SQL: x}, nil
}

// MatchCode is the consume-queue check. For SQL92 every unit passes (Java
// only narrows it with a bloom-filter bitmap, which is off by default).
func (s *Subscription) MatchCode(tagsCode int64) bool {
	if s.SQL != nil {
		return true
	}
	return s.Tag.MatchCode(tagsCode)
}

// MatchAllCodes reports whether MatchCode is always true, so the store can
// skip calling it.
func (s *Subscription) MatchAllCodes() bool { return s.SQL != nil || s.Tag.All }

// MatchRecord is the commit-log check: the SQL92 expression on the record's
// properties; TAG subscriptions pass every record.
func (s *Subscription) MatchRecord(record []byte) bool {
	if s.SQL == nil {
		return true
	}
	return s.SQL.MatchRecord(record)
}
