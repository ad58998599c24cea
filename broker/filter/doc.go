// Package filter owns broker-side message filtering: the SQL92 property
// filter (compiled once, evaluated per message without allocating) and the
// TAG expression ("TagA || TagB") with its consume-queue hash codes.
//
// SQL92 follows the Java broker's JavaCC grammar (filter module,
// SelectorParser.jj) and the evaluation rules of its expression classes,
// including their quirks (each marked "compat:"):
//
//	orExpr     = andExpr { OR andExpr }
//	andExpr    = eqExpr { AND eqExpr }
//	eqExpr     = cmpExpr { "=" cmpExpr | "<>" cmpExpr | IS NULL | IS NOT NULL }
//	cmpExpr    = unary { (">"|">="|"<"|"<=") unary
//	                   | [NOT] (CONTAINS|STARTSWITH|ENDSWITH) 'str'
//	                   | [NOT] BETWEEN unary AND unary
//	                   | [NOT] IN ( 'str' {, 'str'} ) }
//	unary      = "+" unary | "-" unary | NOT unary | primary
//	primary    = literal | identifier | "(" orExpr ")"
//	literal    = 'str' | 123 | 123L | 1.5 | .5 | 1e3 | TRUE | FALSE | NULL
//
// Values are Java's: property values are strings (or null when absent),
// integer literals are Integer or Long, float literals Double. A comparison
// between a string and a number converts the string with Integer.valueOf,
// Long.valueOf or Double.valueOf; a failed conversion is an evaluation
// error, which (as in Java, where it is an exception) makes the whole
// expression not match. A missing property makes comparisons unknown
// (null); NOT, AND and OR follow three-valued logic and only TRUE matches.
//
// Two more Java behaviours kept on purpose: the grammar has no end-of-input
// rule, so text after a complete expression is ignored ("a = 1 b" is
// "a = 1"); and NOT binds tighter than comparisons ("NOT a = 1" is
// "(NOT a) = 1"). We add one limit Java lacks: nesting deeper than
// maxDepth is a parse error rather than a stack overflow.
//
// Evaluation reads the properties string of a stored record
// (name 0x01 value 0x02 ...) directly, in one pass, without allocating.
// testdata/oracle.golden.gz holds ~16,000 expression/message pairs
// evaluated by the Java filter module itself (testdata/oracle/Oracle.java);
// TestOracleGolden checks that this package agrees on every one.
//
//	Compile / Cache.Compile   expression → *Expr (or *ParseError)
//	Expr.Match / MatchRecord  per message, on the pull path
//	ParseTagExpression        TAG subscriptions → TagFilter (codes + tags)
//	Cache.Subscription        (type, expression) → Subscription, both kinds
package filter
