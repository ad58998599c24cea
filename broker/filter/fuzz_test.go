package filter

import (
	"testing"
)

// FuzzCompile checks that no input makes the parser or the evaluator panic,
// that compiling is deterministic, and that a compiled expression yields a
// defined Result on arbitrary properties.
func FuzzCompile(f *testing.F) {
	for _, c := range evalCases {
		f.Add(c.expr, testProps)
	}
	for _, c := range errorCases {
		if len(c.expr) < 200 {
			f.Add(c.expr, "a\x011\x02")
		}
	}
	for _, e := range validExprs {
		if len(e) < 200 {
			f.Add(e, "a\x01x\x02b\x01\x02\x01c\x02")
		}
	}
	f.Fuzz(func(t *testing.T, expr, props string) {
		e, err := Compile(expr)
		e2, err2 := Compile(expr)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("Compile(%q) is not deterministic: %v / %v", expr, err, err2)
		}
		if err != nil {
			pe, ok := err.(*ParseError)
			if !ok || pe.Pos < 0 || pe.Pos > len(expr) || err.Error() != err2.Error() {
				t.Fatalf("Compile(%q): bad error %#v", expr, err)
			}
			return
		}
		if e.String() != expr {
			t.Fatalf("String() = %q, want %q", e.String(), expr)
		}
		for _, p := range []string{props, testProps, expr, ""} {
			r := e.Evaluate(p)
			if r > Failed {
				t.Fatalf("Evaluate(%q) on %q = %d", expr, p, r)
			}
			if r != e2.Evaluate(p) {
				t.Fatalf("Evaluate(%q) on %q differs between compilations", expr, p)
			}
			if e.Match(p) != (r == True) {
				t.Fatalf("Match disagrees with Evaluate for %q", expr)
			}
		}
	})
}

// FuzzParseJavaDouble checks the Double.valueOf syntax check against
// panics and against accepting what the syntax forbids.
func FuzzParseJavaDouble(f *testing.F) {
	for _, s := range []string{"1", "1.5", " 2.5 ", "1e3", "1.5f", "NaN", "-Infinity", "0x10p0", "0x1.8P-1d", "+5", ".5", "5.", "1e", "0x1", "abc", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := parseJavaDouble(s)
		if !ok && v != 0 {
			t.Fatalf("parseJavaDouble(%q) = %v, false", s, v)
		}
		// Long.parseLong accepts non-ASCII digits, Double.valueOf does not.
		if _, okInt := parseJavaInt(s, 64); okInt && !ok && isASCII(s) {
			t.Fatalf("%q parses as a long but not as a double", s)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
