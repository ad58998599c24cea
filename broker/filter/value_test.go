package filter

import (
	"math"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

func TestParseJavaInt(t *testing.T) {
	cases := []struct {
		s    string
		bits int
		want int64
		ok   bool
	}{
		{"0", 32, 0, true},
		{"+5", 32, 5, true},
		{"-5", 32, -5, true},
		{"2147483647", 32, math.MaxInt32, true},
		{"-2147483648", 32, math.MinInt32, true},
		{"2147483648", 32, 0, false},
		{"-2147483649", 32, 0, false},
		{"9223372036854775807", 64, math.MaxInt64, true},
		{"-9223372036854775808", 64, math.MinInt64, true},
		{"9223372036854775808", 64, 0, false},
		{"", 32, 0, false},
		{"-", 32, 0, false},
		{"+", 64, 0, false},
		{" 5", 32, 0, false},
		{"5 ", 32, 0, false},
		{"5.0", 32, 0, false},
		{"1_0", 32, 0, false},
		{"0x10", 32, 0, false},
		{"٣٤", 32, 34, true},          // Arabic-Indic digits, as Character.digit
		{"-१२", 64, -12, true},        // Devanagari
		{"𝟓", 32, 0, false},           // supplementary: two UTF-16 units, no digit
		{"\xff", 32, 0, false},        // invalid UTF-8
		{"5٠٠٠٠٠٠٠٠٠٠", 32, 0, false}, // overflow with non-ASCII digits
	}
	for _, tc := range cases {
		got, ok := parseJavaInt(tc.s, tc.bits)
		require.Equal(t, tc.ok, ok, "%q", tc.s)
		require.Equal(t, tc.want, got, "%q", tc.s)
	}
}

// Unicode keeps decimal digits in runs of ten starting at zero; javaDigit
// relies on it.
func TestDecimalDigitRuns(t *testing.T) {
	for _, rg := range unicode.Nd.R16 {
		require.Equal(t, uint16(1), rg.Stride)
		require.Zero(t, (rg.Hi-rg.Lo+1)%10, "run %#x-%#x", rg.Lo, rg.Hi)
	}
	require.Equal(t, 3, javaDigit('٣'))
	require.Equal(t, -1, javaDigit('a'))
	require.Equal(t, -1, javaDigit('Ⅻ')) // a number, but not a decimal digit
}

func TestParseJavaDouble(t *testing.T) {
	cases := []struct {
		s    string
		want float64
		ok   bool
	}{
		{"1", 1, true},
		{"1.5", 1.5, true},
		{" 2.5\t", 2.5, true},
		{"\x002.5\x1f", 2.5, true}, // trim removes every char <= U+0020
		{"1e3", 1000, true},
		{"1E+3", 1000, true},
		{"-.5e-1", -0.05, true},
		{"5.", 5, true},
		{".5", 0.5, true},
		{"1.5f", 1.5, true},
		{"1.5D", 1.5, true},
		{"0x10p0", 16, true},
		{"0X1.8P1", 3, true},
		{"0x1p-1d", 0.5, true},
		{"Infinity", math.Inf(1), true},
		{"-Infinity", math.Inf(-1), true},
		{"+Infinity", math.Inf(1), true},
		{"1e400", math.Inf(1), true},
		{"1e-400", 0, true},
		{"inf", 0, false},
		{"nan", 0, false},
		{"infinity", 0, false},
		{"", 0, false},
		{"   ", 0, false},
		{".", 0, false},
		{"e5", 0, false},
		{"1e", 0, false},
		{"1e+", 0, false},
		{"0x10", 0, false}, // hex needs a binary exponent
		{"0x.p1", 0, false},
		{"1_0", 0, false},
		{"1.5ff", 0, false},
		{"++1", 0, false},
		{"1 5", 0, false},
		{"٣", 0, false}, // FloatingDecimal takes ASCII digits only
	}
	for _, tc := range cases {
		got, ok := parseJavaDouble(tc.s)
		require.Equal(t, tc.ok, ok, "%q", tc.s)
		if ok {
			require.Equal(t, tc.want, got, "%q", tc.s)
		}
	}
	nan, ok := parseJavaDouble("-NaN")
	require.True(t, ok)
	require.True(t, math.IsNaN(nan))
}

func TestJavaCompare(t *testing.T) {
	i := func(n int64) value { return value{k: kInt, i: n} }
	l := func(n int64) value { return value{k: kLong, i: n} }
	d := func(f float64) value { return value{k: kDouble, f: f} }
	s := func(x string) value { return value{k: kString, s: x} }
	cases := []struct {
		l, r value
		want int
		ok   bool
	}{
		{i(1), i(2), -1, true},
		{i(2), l(2), 0, true},
		{l(3), i(2), 1, true},
		{i(2), d(2.5), -1, true},
		{d(2.5), l(2), 1, true},
		{s("5"), i(5), 0, true},
		{i(5), s("6"), -1, true},
		{s("3000000000"), i(1), 0, false}, // Integer.valueOf overflows
		{s("3000000000"), l(1), 1, true},
		{s("2.5"), d(2.5), 0, true},
		{s("x"), d(2.5), 0, false},
		{s("TRUE"), vTrue, 0, true},
		{s("yes"), vFalse, 0, true},
		{vTrue, s("true"), 0, false}, // Java ClassCastException
		{vTrue, i(1), -1, true},
		{i(1), vTrue, -1, true},
		{s("1"), s("1"), 0, true},
		{vFalse, vTrue, -1, true},
		{d(math.NaN()), d(math.NaN()), 0, true},
		{d(math.NaN()), d(math.Inf(1)), 1, true},
		{d(math.Copysign(0, -1)), d(0), -1, true},
	}
	for _, tc := range cases {
		c, ok := javaCompare(tc.l, tc.r)
		require.Equal(t, tc.ok, ok, "%v vs %v", tc.l, tc.r)
		if ok {
			require.Equal(t, tc.want, c, "%v vs %v", tc.l, tc.r)
		}
	}
}
