package filter

import "testing"

func BenchmarkEvaluate(b *testing.B) {
	for _, bc := range []struct{ name, expr string }{
		{"eq", "a = 3"},
		{"typical", "(a > 2 AND b IN ('x', 'abc')) OR s CONTAINS 'world'"},
		{"between_tags", "e BETWEEN -10 AND 10 AND TAGS IN ('TagA', 'TagB')"},
		{"missing", "missing IS NOT NULL AND missing2 > 5"},
	} {
		e, err := Compile(bc.expr)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(testProps)))
			for b.Loop() {
				e.Evaluate(testProps)
			}
		})
	}
}

func BenchmarkMatchRecord(b *testing.B) {
	e, err := Compile("(a > 2 AND b IN ('x', 'abc')) OR s CONTAINS 'world'")
	if err != nil {
		b.Fatal(err)
	}
	rec := testRecord(b, testProps)
	b.ReportAllocs()
	b.SetBytes(int64(len(rec)))
	for b.Loop() {
		e.MatchRecord(rec)
	}
}

func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile("(a > 2 AND b IN ('x', 'abc')) OR s CONTAINS 'world'"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCacheHit(b *testing.B) {
	c := NewCache(0)
	expr := "(a > 2 AND b IN ('x', 'abc')) OR s CONTAINS 'world'"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Compile(expr); err != nil {
			b.Fatal(err)
		}
	}
}
