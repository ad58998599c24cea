package filter

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var errorCases = []struct {
	expr string
	msg  string // substring of the error
}{
	{"", "expected an expression, found end of expression"},
	{"   ", "expected an expression"},
	{"a =", "expected an expression"},
	{"a = 1 AND", "expected an expression"},
	{"a and between 2 and 10", `found "between"`},
	{" a between 10 and 0", "lower bound 10 is greater than upper bound 0"},
	{"a between 1.5 and 1", "lower bound"},
	{"a between NULL and 1", "can not be NULL"},
	{"a between 1 and 'x'", "cannot be compared"},
	{"a between 'a' and 'b'", "cannot be compared with >"},
	{"a > 100000000000000000000000", "out of range"},
	{"a > 9223372036854775808", "out of range"},
	{"a > 1" + strings.Repeat("1", 400) + ".5", "greater than"},
	{"a = 0.0", "less than 4.9E-324"},
	{"a = 1e-400", "less than"},
	{"a = NULL", "IS NULL"},
	{"NULL = a", "IS NULL"},
	{"a <> NULL", "IS NULL"},
	{"TRUE = 5", "TRUE cannot be compared with 5"},
	{"FALSE = 'x'", "cannot be compared"},
	{"a > 'x'", "cannot be compared"},
	{"a > TRUE", "cannot be compared"},
	{"a < NULL", "cannot be compared"},
	{"(a = 1) > 5", "cannot be compared"},
	{"5", "will not result in a boolean value: 5"},
	{"'x'", "will not result in a boolean value"},
	{"-a", "will not result in a boolean value"},
	{"NOT 5", "will not result in a boolean value"},
	{"a AND 5", "will not result in a boolean value"},
	{"5 OR a", "will not result in a boolean value"},
	{"5 IN ('a')", "IN needs a property"},
	{"(a = 1) IN ('a')", "IN needs a property"},
	{"a IN ()", "expected string literal"},
	{"a IN (1)", "expected string literal"},
	{"a IN ('x',)", "expected string literal"},
	{"a IN ('x'", `expected ")"`},
	{"a CONTAINS 5", "expected string literal"},
	{"a NOT 5", "after NOT"},
	{"a NOT LIKE 'x'", "after NOT"},
	{"a IS 5", "expected NULL"},
	{"a IS NOT 5", "expected NULL"},
	{"a = 'unterminated", "unterminated string literal"},
	{"a = 1 #", "invalid character '#'"},
	{"a # 1", "invalid character '#'"},
	{"a = 1 NOT é", "invalid character 'é'"},
	{"(a = 1", `expected ")"`},
	{"a == 1", `expected an expression, found "="`},
	{"a != 1", "invalid character '!'"},
	{"a = --3\n", "expected an expression"}, // "--3\n" is a comment
	{"a = 1 /* open", "invalid character '/'"},
	{"a = .", "invalid character '.'"},
	{"not = 1", `expected an expression, found "="`},
	{"a = 1 OR", "expected an expression"},
	{strings.Repeat("(", maxDepth+1) + "a" + strings.Repeat(")", maxDepth+1), "nested too deeply"},
	{strings.Repeat("NOT ", maxDepth+1) + "a", "nested too deeply"},
	{"a = 1" + strings.Repeat(" AND a = 1", maxDepth+1), "nested too deeply"},
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range errorCases {
		e, err := Compile(tc.expr)
		require.Error(t, err, "%q", tc.expr)
		require.Nil(t, e)
		var pe *ParseError
		require.True(t, errors.As(err, &pe), "%q: %T", tc.expr, err)
		require.Contains(t, err.Error(), tc.msg, "%q", tc.expr)
		require.True(t, strings.HasPrefix(err.Error(), "invalid SQL92 expression at column "), err.Error())
		require.GreaterOrEqual(t, pe.Pos, 0)
		require.LessOrEqual(t, pe.Pos, len(tc.expr))
	}
}

func TestCompileErrorPosition(t *testing.T) {
	_, err := Compile("a = 1 AND b # 2")
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, 12, pe.Pos)
	require.Equal(t, "invalid SQL92 expression at column 13: invalid character '#'", err.Error())
}

// validExprs are in the spirit of the Java filter module's parser tests.
var validExprs = []string{
	"a=3 and b<>4 And c>5 AND d<=4",
	"a=3  and    b<>4 And c>5 AND d<=4",
	"a=3 or b<>4 Or c>5 OR d<=4",
	"a in ('3', '4', '5')",
	"(a not in ('6', '4', '5')) or (b in ('3', '4', '5'))",
	"(a between 2 and 10) AND (b not between 6 and 9)",
	"a is null",
	"a is not null",
	"a <= now",
	"a=3 and b contains 'xxx' and c not contains 'xxx'",
	"a startswith 'x' or a not startswith 'y' or a endswith 'z' or a not endswith 'w'",
	"(a > 10 AND a < 100) OR (b IS NOT NULL AND b=TRUE)",
	"a = 1.5e10 OR a = .5 OR a = 5. OR a = 5E10 OR a = 1.5E-3",
	"a = 2147483647 OR a = 2147483648 OR a = -9223372036854775807",
	"a = 10L OR a = 10l",
	"a not between 5 and 1", // no bounds check for NOT BETWEEN
	"(a) IN ('x')",
	"+a IN ('x')",
	"x = 'it''s' AND y = ''''",
	"_a = 1 AND $b = 2 AND a1_$ = 3",
	"a = 1\n-- comment\nAND b = 2",
	"a = 1 /* c1 */ AND /** c2 **/ b = 2",
	"TAGS IN ('TagA', 'TagB')",
	strings.Repeat("(", 100) + "a = 1" + strings.Repeat(")", 100),
	strings.Repeat("NOT ", 100) + "a",
	"a = 1" + strings.Repeat(" OR a = 1", 500),
}

func TestCompileValid(t *testing.T) {
	for _, expr := range validExprs {
		e, err := Compile(expr)
		require.NoError(t, err, expr)
		require.Equal(t, expr, e.String())
	}
}

func TestCompileStructure(t *testing.T) {
	cases := []struct{ expr, tree string }{
		{"a = 1 AND b = 2 OR c = 3", "(((a = 1) AND (b = 2)) OR (c = 3))"},
		{"a = 1 OR b = 2 AND c = 3", "((a = 1) OR ((b = 2) AND (c = 3)))"},
		{"a <> 1", "(NOT (a = 1))"},
		{"a IS NOT NULL", "(NOT (a = NULL))"},
		{"a BETWEEN 1 AND 2", "((a >= 1) AND (a <= 2))"},
		{"a NOT BETWEEN 1 AND 2", "((a < 1) OR (a > 2))"},
		{"NOT a = 1", "((NOT a) = 1)"}, // compat: NOT binds tighter than =
		{"a NOT IN ('x', 'y')", "(a NOT IN ('x', 'y'))"},
		{"a = -5 AND b = - 2.5", "((a = (-5)) AND (b = (-2.5)))"},
		{"a = 2147483648", "(a = 2147483648)"},
		{"x = 'it''s'", "(x = 'it''s')"},
		{"a = 3 b = 4", "(a = 3)"}, // compat: trailing input ignored
		{"a", "a"},
	}
	for _, tc := range cases {
		e, err := Compile(tc.expr)
		require.NoError(t, err, tc.expr)
		require.Equal(t, tc.tree, e.root.String(), tc.expr)
	}
}

func TestCompileLiteralTypes(t *testing.T) {
	cases := []struct {
		lit string
		k   kind
	}{
		{"5", kInt}, {"5L", kInt}, {"2147483647", kInt}, {"2147483648", kLong},
		{"9223372036854775807", kLong}, {"1.5", kDouble}, {".5", kDouble},
		{"5.", kDouble}, {"5e3", kDouble}, {"'x'", kString}, {"TRUE", kBool}, {"NULL", kNull},
	}
	for _, tc := range cases {
		e, err := Compile("a = 1 OR " + tc.lit + " IS NULL")
		require.NoError(t, err, tc.lit)
		c := e.root.r.l // OR -> IS NULL (an equality) -> its left operand
		require.Equal(t, opConst, c.op, tc.lit)
		require.Equal(t, tc.k, c.val.k, tc.lit)
	}
}

func TestCompileDoesNotAliasInput(t *testing.T) {
	b := []byte("s = 'abc' AND t IN ('x','y') AND u CONTAINS 'zz'")
	e, err := Compile(string(b))
	require.NoError(t, err)
	src := unsafeString(b)
	e2, err := Compile(src)
	require.NoError(t, err)
	for i := range b {
		b[i] = '#'
	}
	props := "s\x01abc\x02t\x01y\x02u\x01azzb\x02"
	require.Equal(t, True, e.Evaluate(props))
	require.Equal(t, True, e2.Evaluate(props))
	require.Equal(t, "s = 'abc' AND t IN ('x','y') AND u CONTAINS 'zz'", e2.String())
}

func TestLexer(t *testing.T) {
	cases := []struct {
		src   string
		kinds []tokKind
		texts []string
	}{
		{"0L", []tokKind{tDecimal, tID}, []string{"0", "L"}},
		{"01", []tokKind{tDecimal, tDecimal}, []string{"0", "1"}},
		{"01.5", []tokKind{tFloat}, []string{"01.5"}},
		{"12L", []tokKind{tDecimal}, []string{"12L"}},
		{"1.5L", []tokKind{tFloat, tID}, []string{"1.5", "L"}},
		{"1e", []tokKind{tDecimal, tID}, []string{"1", "e"}},
		{"1e+5x", []tokKind{tFloat, tID}, []string{"1e+5", "x"}},
		{"1.e5", []tokKind{tFloat}, []string{"1.e5"}},
		{".5.5", []tokKind{tFloat, tFloat}, []string{".5", ".5"}},
		{"<><=>=<>", []tokKind{tNe, tLe, tGe, tNe}, []string{"<>", "<=", ">=", "<>"}},
		{"notx NOT Not", []tokKind{tID, tNot, tNot}, []string{"notx", "NOT", "Not"}},
		{"'a''b' ''", []tokKind{tString, tString}, []string{"'a''b'", "''"}},
		{"- -- x", []tokKind{tMinus, tMinus, tMinus, tID}, []string{"-", "-", "-", "x"}},
		{"a--x\nb", []tokKind{tID, tID}, []string{"a", "b"}},
	}
	for _, tc := range cases {
		lx := lexer{src: tc.src}
		var kinds []tokKind
		var texts []string
		for {
			tok, msg := lx.next()
			require.Empty(t, msg, tc.src)
			if tok.kind == tEOF {
				break
			}
			kinds = append(kinds, tok.kind)
			texts = append(texts, tok.text)
		}
		require.Equal(t, tc.kinds, kinds, tc.src)
		require.Equal(t, tc.texts, texts, tc.src)
	}
}

// Large hostile inputs fail (or pass) cleanly, without deep recursion or
// quadratic rescans.
func TestCompileLargeInputs(t *testing.T) {
	const n = 1 << 20
	for _, tc := range []struct {
		expr string
		ok   bool
	}{
		{strings.Repeat("-", n), false},
		{"a = " + strings.Repeat("- ", n/2) + "1", false},
		{strings.Repeat("(", n), false},
		{strings.Repeat("NOT ", n/4) + "a", false},
		{strings.Repeat("/*", n/2), false},
		{"a = '" + strings.Repeat("x", n) + "'", true},
		{strings.Repeat("a", n) + " IS NULL", true},
		{"a IN ('x'" + strings.Repeat(", 'y'", n/8) + ")", true},
		{"a = 1" + strings.Repeat(" AND a = 1", n/16), false},
		{"a = 1 " + strings.Repeat("-- ", n/4), true},
	} {
		e, err := Compile(tc.expr)
		if tc.ok {
			require.NoError(t, err, "%.40q", tc.expr)
			require.NotEqual(t, Failed, e.Evaluate("a\x011\x02"), "%.40q", tc.expr)
		} else {
			require.Error(t, err, "%.40q", tc.expr)
		}
	}
}
