package filter

import (
	"bufio"
	"compress/gzip"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/message"
)

// The golden file testdata/oracle.golden.gz holds expressions evaluated by the
// Apache RocketMQ filter module itself (testdata/oracle/Oracle.java):
//
//	go test ./broker/filter -run TestOracleGolden -gen-oracle-input=/tmp/in.txt
//	javac -cp guava.jar -d classes <rocketmq filter sources> Oracle.java
//	java -cp classes:guava.jar Oracle < /tmp/in.txt | gzip -9 -n > testdata/oracle.golden.gz
//
// testdata/oracle_fuzz.golden.gz was made the same way from the inputs
// FuzzCompile found interesting (expression plus, when valid UTF-8, the
// fuzzed properties; and a fixed message). testdata/oracle_num.golden.gz
// compares one property against Integer, Long and Double literals, its
// values being edge cases and FuzzParseJavaDouble's corpus: it pins down
// Java's string-to-number conversions.
var (
	genOracleInput = flag.String("gen-oracle-input", "", "write oracle input lines to this file and skip the check")
	oracleFiles    = flag.String("oracle-files", "testdata/oracle.golden.gz,testdata/oracle_fuzz.golden.gz,testdata/oracle_num.golden.gz", "comma-separated golden files to check (gzip when named .gz)")
)

var oracleProps = []map[string]string{
	{"a": "3", "b": "abc", "c": "5.5", "d": "true", "e": "-7", "TAGS": "TagA"},
	{"a": "3000000000", "b": "3", "c": "1e3", "d": "TRUE", "e": " 2.5 ", "TAGS": "TagB"},
	{"a": "NaN", "b": "1.5f", "c": "0x10p0", "d": "+5", "e": "Infinity"},
	{"a": "-0", "b": "0.0", "c": "9223372036854775807", "d": "9223372036854775808", "e": "2147483648"},
	{"a": "abc", "b": "it's", "c": "-7", "d": "false", "e": "1_000", "TAGS": "x"},
	{"a": "5", "b": "5", "c": "5.0", "d": "05", "e": "-5"},
	{"a": "1e400", "b": "-Infinity", "c": " 5", "d": "0x1.8p1", "e": "5d", "TAGS": "TagA"},
	{"a": "1.", "b": ".5", "c": "1e", "d": "++5", "e": "0X1P3F"},
	{"a": "-2147483648", "b": "-9223372036854775808", "c": "5000000000", "d": "-", "e": "1e-400"},
	{},
}

var (
	oracleNames    = []string{"a", "b", "c", "d", "e", "missing", "TAGS"}
	oracleLiterals = []string{
		"3", "0", "5L", "2147483647", "2147483648", "9223372036854775807",
		"1.5", ".5", "5.", "1e3", "2.5", "5.0",
		"'abc'", "'3'", "'true'", "'it''s'", "''", "'5.5'",
		"TRUE", "FALSE", "NULL", "-3", "-1.5", "- -7",
		"5000000000", "-2147483648", "0.5", "1e-5", "+5",
	}
	oracleStrings = []string{"'abc'", "'3'", "'a'", "''", "'Tag'", "'5'", "'it''s'", "'x'"}
)

type exprGen struct{ r *rand.Rand }

func (g exprGen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g exprGen) operand() string {
	switch g.r.IntN(5) {
	case 0, 1:
		return g.pick(oracleNames)
	case 2, 3:
		return g.pick(oracleLiterals)
	}
	return "-" + g.pick(oracleNames)
}

func (g exprGen) expr(depth int) string {
	n := 12
	if depth <= 0 {
		n = 8
	}
	switch g.r.IntN(n) {
	case 0:
		return g.operand() + " " + g.pick([]string{"=", "<>", ">", ">=", "<", "<="}) + " " + g.operand()
	case 1:
		return g.operand() + g.pick([]string{" BETWEEN ", " NOT BETWEEN "}) + g.operand() + " AND " + g.operand()
	case 2:
		list := g.pick(oracleStrings)
		for range g.r.IntN(3) {
			list += ", " + g.pick(oracleStrings)
		}
		return g.operand() + g.pick([]string{" IN ", " NOT IN "}) + "(" + list + ")"
	case 3:
		return g.operand() + g.pick([]string{" CONTAINS ", " NOT CONTAINS ", " STARTSWITH ", " NOT STARTSWITH ", " ENDSWITH ", " NOT ENDSWITH "}) + g.pick(oracleStrings)
	case 4:
		return g.operand() + g.pick([]string{" IS NULL", " IS NOT NULL"})
	case 5:
		return g.pick(oracleNames)
	case 6:
		return g.pick([]string{"TRUE", "FALSE", "NULL"})
	case 7:
		return g.operand() + " = " + g.pick([]string{"TRUE", "FALSE"})
	case 8:
		return g.expr(depth-1) + " AND " + g.expr(depth-1)
	case 9:
		return g.expr(depth-1) + " OR " + g.expr(depth-1)
	case 10:
		return "NOT " + g.expr(depth-1)
	}
	return "(" + g.expr(depth-1) + ")"
}

// mutate damages an expression now and then, to exercise parse errors.
func (g exprGen) mutate(s string) string {
	if g.r.IntN(4) != 0 || s == "" {
		return s
	}
	i := g.r.IntN(len(s))
	switch g.r.IntN(3) {
	case 0:
		return s[:i] + s[i+1:]
	case 1:
		return s[:i] + g.pick([]string{"(", ")", "'", ",", " AND ", " NOT ", "=", "5", "#"}) + s[i:]
	}
	return s[:i]
}

func oracleInputs() []string {
	g := exprGen{r: rand.New(rand.NewPCG(1, 2))}
	var exprs []string
	for range 8000 {
		exprs = append(exprs, g.mutate(g.expr(3)))
	}
	var lines []string
	line := func(e, props string) string {
		return hex.EncodeToString([]byte(e)) + "\t" + hex.EncodeToString([]byte(props))
	}
	for _, c := range evalCases {
		lines = append(lines, line(c.expr, testProps))
	}
	for _, c := range errorCases {
		if !strings.Contains(c.msg, "nested too deeply") { // our own limit, not Java's
			lines = append(lines, line(c.expr, testProps))
		}
	}
	for _, e := range validExprs {
		lines = append(lines, line(e, testProps))
	}
	for i, e := range exprs {
		for j := range 2 {
			lines = append(lines, line(e, message.EncodeProperties(oracleProps[(i+j*3)%len(oracleProps)])))
		}
	}
	return lines
}

func TestOracleGolden(t *testing.T) {
	if *genOracleInput != "" {
		require.NoError(t, os.WriteFile(*genOracleInput, []byte(strings.Join(oracleInputs(), "\n")+"\n"), 0o644))
		t.Skip("wrote oracle input")
	}
	for _, name := range strings.Split(*oracleFiles, ",") {
		t.Run(name, func(t *testing.T) { checkOracleFile(t, name) })
	}
}

func checkOracleFile(t *testing.T, name string) {
	f, err := os.Open(name)
	require.NoError(t, err)
	defer f.Close()
	var in io.Reader = f
	if strings.HasSuffix(name, ".gz") {
		zr, err := gzip.NewReader(f)
		require.NoError(t, err)
		in = zr
	}
	want := map[string]Result{"TRUE": True, "FALSE": False, "NULL": Unknown, "EXCEPTION": Failed}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	n, parseErrs, counts := 0, 0, map[Result]int{}
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		require.Len(t, fields, 3)
		expr, err := hex.DecodeString(fields[0])
		require.NoError(t, err)
		props, err := hex.DecodeString(fields[1])
		require.NoError(t, err)
		n++
		e, err := Compile(string(expr))
		if fields[2] == "PARSE_ERROR" {
			require.Error(t, err, "Java rejects %.200q", expr)
			parseErrs++
			continue
		}
		require.NoError(t, err, "Java accepts %.200q", expr)
		r, ok := want[fields[2]]
		require.True(t, ok, fields[2])
		got := e.Evaluate(string(props))
		require.Equal(t, r, got, "%q on %q", expr, props)
		counts[r]++
	}
	require.NoError(t, sc.Err())
	require.Positive(t, n)
	t.Log(fmt.Sprintf("%d cases: %d parse errors, results %v", n, parseErrs, counts))
}
