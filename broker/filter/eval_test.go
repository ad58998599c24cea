package filter

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/message"
)

// testProps is the message most evaluation cases run against.
var testProps = message.EncodeProperties(map[string]string{
	"a":    "3",
	"b":    "abc",
	"c":    "5.5",
	"d":    "true",
	"e":    "-7",
	"big":  "3000000000",
	"s":    "hello world",
	"q":    "it's",
	"f1":   " 2.5 ",
	"f2":   "1e3",
	"f3":   "1.5f",
	"f4":   "NaN",
	"f5":   "0x10p0",
	"f6":   "+5",
	"TAGS": "TagA",
	"$x_1": "9",
})

// evalCases run against testProps; the oracle golden file checks them
// against the Java implementation too.
var evalCases = []struct {
	expr string
	want Result
}{
	// string property against integer literals: Integer.valueOf
	{"a = 3", True},
	{"a = 4", False},
	{"a <> 4", True},
	{"a <> 3", False},
	{"a > 2", True},
	{"a >= 3", True},
	{"a < 3", False},
	{"a <= 3", True},
	{"a = 3L", True},
	{"a IN ('3')", True},
	// against doubles: Double.valueOf
	{"a > 2.5", True},
	{"c > 5.0", True},
	{"c = 5.5", True},
	{"c = 5.50", True},
	{"c < 5.25", False},
	// a string that does not convert fails the whole expression
	{"c > 5", Failed},
	{"b > 1", Failed},
	{"b = 1", Failed},
	{"'abc' = 5", Failed},
	// Long literals use Long.valueOf, Integer ones Integer.valueOf
	{"big > 5", Failed},
	{"big > 5000000000", False},
	{"big < 5000000000", True},
	{"big = 3000000000", True},
	{"a < 5000000000", True},
	// negative numbers
	{"e = -7", True},
	{"e < -5", True},
	{"e > -8", True},
	{"e BETWEEN -10 AND -1", True},
	{"a BETWEEN -1 AND 5", True},
	{"-a = -3", Unknown}, // negating a string is NULL
	{"- -3 = 3", True},
	{"+3 = a", True},
	// strings
	{"b = 'abc'", True},
	{"b = 'ABC'", False},
	{"b <> 'abc'", False},
	{"q = 'it''s'", True},
	{"TAGS = 'TagA'", True},
	{"TAGS IN ('TagB', 'TagA')", True},
	{"$x_1 = 9", True},
	// two properties
	{"a = b", False},
	{"a < c", True}, // both strings: compared as doubles
	{"a > b", Failed},
	{"missing = missing2", True}, // compat: NULL = NULL
	// booleans
	{"d = TRUE", True},
	{"d = FALSE", False},
	{"b = FALSE", True}, // Boolean.valueOf("abc") is false
	{"b = TRUE", False},
	{"TRUE = d", Failed}, // Java ClassCastException
	{"5 = TRUE", False},
	{"(a = 3) = TRUE", True},
	{"(a = 3) = FALSE", False},
	{"TRUE", True},
	{"FALSE", False},
	{"NULL", Unknown},
	{"NULL IS NULL", True},
	{"a", False}, // a property as a boolean: never a Boolean, so FALSE
	{"missing", Unknown},
	{"NOT a", True},
	{"NOT missing", Unknown},
	{"NOT a = 3", False}, // (NOT a) = 3: TRUE against 3 is FALSE
	// missing properties
	{"missing = 1", Unknown},
	{"missing > 1", Unknown},
	{"1 < missing", Unknown},
	{"missing <> 1", Unknown},
	{"NOT (missing = 1)", Unknown},
	{"missing IS NULL", True},
	{"missing IS NOT NULL", False},
	{"a IS NULL", False},
	{"a IS NOT NULL", True},
	{"missing BETWEEN 1 AND 5", Unknown},
	{"missing NOT BETWEEN 1 AND 5", Unknown},
	{"missing IN ('x')", Unknown},
	{"missing NOT IN ('x')", Unknown},
	{"missing CONTAINS 'x'", False},
	{"missing NOT CONTAINS 'x'", False},
	// between
	{"a BETWEEN 1 AND 5", True},
	{"a BETWEEN 3 AND 3", True},
	{"a BETWEEN 4 AND 5", False},
	{"a NOT BETWEEN 4 AND 5", True},
	{"a NOT BETWEEN 1 AND 5", False},
	{"c BETWEEN 5.0 AND 6.0", True},
	// in
	{"b IN ('x', 'abc')", True},
	{"b NOT IN ('x', 'abc')", False},
	{"b IN ('x')", False},
	{"b NOT IN ('x')", True},
	{"b IN ('1','2','3','4','5','6','7','8','9','abc')", True},
	{"b IN ('1','2','3','4','5','6','7','8','9','10')", False},
	// contains / startswith / endswith
	{"s CONTAINS 'lo w'", True},
	{"s CONTAINS 'xyz'", False},
	{"s NOT CONTAINS 'xyz'", True},
	{"s CONTAINS ''", False},
	{"s NOT CONTAINS ''", False},
	{"s STARTSWITH 'hell'", True},
	{"s NOT STARTSWITH 'hell'", False},
	{"s ENDSWITH 'world'", True},
	{"s NOT ENDSWITH 'x'", True},
	{"5 CONTAINS '5'", False}, // not a string
	{"(b > 1) CONTAINS 'x'", Failed},
	// three-valued logic
	{"missing = 1 OR a = 3", True},
	{"missing = 1 OR a = 4", Unknown},
	{"missing = 1 AND a = 3", Unknown},
	{"missing = 1 AND a = 4", False},
	{"a = 4 OR missing = 1", Unknown},
	{"a = 3 AND missing = 1", Unknown},
	// exceptions propagate unless short-circuited away
	{"b > 1 OR a = 3", Failed},
	{"a = 3 OR b > 1", True},
	{"a = 4 AND b > 1", False},
	{"a = 3 AND b > 1", Failed},
	{"NOT (b > 1)", Failed},
	{"b > 1 IS NULL", Failed},
	// Double.valueOf forms
	{"f1 > 2.0", True},
	{"f1 = 2.5", True},
	{"f1 > 2", Failed}, // Integer.valueOf does not trim
	{"f2 = 1000.0", True},
	{"f3 = 1.5", True},
	{"f4 > 1.0", True}, // NaN sorts above everything
	{"f4 = 1.0", False},
	{"f5 = 16.0", True},
	{"f6 = 5", True},
	// keywords are case-insensitive, names are not
	{"a between 1 and 5 AnD b in ('abc') oR c is nOt null", True},
	{"A = 3", Unknown},
	// comments and trailing input
	{"a = 3 -- trailing comment\n", True},
	{"/* lead */ a = 3", True},
	{"a = 3 garbage", True}, // compat: the grammar has no end-of-input rule
	{"a = 3)", True},
	{"a = - -3", True},
	{"a = --3", True}, // compat: without a line break "--" is two minus signs
}

func TestEvaluate(t *testing.T) {
	for _, tc := range evalCases {
		e, err := Compile(tc.expr)
		require.NoError(t, err, tc.expr)
		require.Equal(t, tc.want, e.Evaluate(testProps), "%q", tc.expr)
		require.Equal(t, tc.want == True, e.Match(testProps), "%q", tc.expr)
	}
}

func TestEvaluateLastPropertyWins(t *testing.T) {
	props := "a\x011\x02a\x022\x02b\x01x\x02a\x013\x02"
	e, err := Compile("a = 3 AND b = 'x'")
	require.NoError(t, err)
	require.Equal(t, True, e.Evaluate(props))
	// Property() agrees on the value used.
	v, _ := message.Property(props, "a")
	require.Equal(t, "3", v)
}

func TestEvaluateManyProperties(t *testing.T) {
	// More distinct names than collection slots: lookups scan directly.
	expr := "p0 = '0'"
	m := map[string]string{}
	for i := range maxSlots + 4 {
		name := "p" + string(rune('a'+i))
		expr += " AND " + name + " IS NOT NULL"
		m[name] = "v"
	}
	m["p0"] = "0"
	e, err := Compile(expr)
	require.NoError(t, err)
	require.Greater(t, len(e.names), maxSlots)
	require.Equal(t, True, e.Evaluate(message.EncodeProperties(m)))
	delete(m, "pc")
	require.Equal(t, False, e.Evaluate(message.EncodeProperties(m)))
}

func TestEvaluateEmptyProperties(t *testing.T) {
	e, err := Compile("a IS NULL AND NOT (b = 1) IS NULL")
	require.NoError(t, err)
	require.Equal(t, True, e.Evaluate(""))
}

func testRecord(t testing.TB, props string) []byte {
	m := &message.Message{
		Topic:      "TopicTest",
		Body:       []byte("hello"),
		Properties: props,
		BornHost:   netip.MustParseAddrPort("127.0.0.1:1234"),
		StoreHost:  netip.MustParseAddrPort("127.0.0.1:10911"),
	}
	return message.AppendRecord(nil, m, message.BodyCRC(m.Body), 7, 4096)
}

func TestMatchRecord(t *testing.T) {
	e, err := Compile("a BETWEEN 1 AND 5 AND TAGS = 'TagA'")
	require.NoError(t, err)
	require.True(t, e.MatchRecord(testRecord(t, testProps)))
	require.False(t, e.MatchRecord(testRecord(t, "a\x019\x02TAGS\x01TagA\x02")))
	require.False(t, e.MatchRecord([]byte{1, 2, 3}))
}

func TestEvaluateDoesNotAllocate(t *testing.T) {
	e, err := Compile("(a > 2 AND b IN ('x', 'abc')) OR s CONTAINS 'world' OR missing IS NULL")
	require.NoError(t, err)
	record := testRecord(t, testProps)
	var r Result
	allocs := testing.AllocsPerRun(200, func() { r = e.Evaluate(testProps) })
	require.Equal(t, True, r)
	require.Zero(t, allocs)
	var ok bool
	allocs = testing.AllocsPerRun(200, func() { ok = e.MatchRecord(record) })
	require.True(t, ok)
	require.Zero(t, allocs)
	// The failure path (a string that does not convert) does not allocate either.
	bad, err := Compile("b > 1.5 OR c > 5")
	require.NoError(t, err)
	allocs = testing.AllocsPerRun(200, func() { r = bad.Evaluate(testProps) })
	require.Equal(t, Failed, r)
	require.Zero(t, allocs)
}
