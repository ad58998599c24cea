package filter_test

import (
	"fmt"

	"github.com/rocketgo/rocketgo/broker/filter"
	"github.com/rocketgo/rocketgo/codec/message"
)

func Example() {
	cache := filter.NewCache(0) // one per broker

	// Pull or CHECK_CLIENT_CONFIG: compile (cached) and report parse errors.
	if _, err := cache.Compile("a > 5 AND"); err != nil {
		fmt.Println(err)
	}
	expr, err := cache.Compile("region IN ('eu', 'us') AND price BETWEEN 10 AND 100")
	if err != nil {
		panic(err)
	}

	// Per message: evaluate against the stored properties string.
	props := message.EncodeProperties(map[string]string{"region": "eu", "price": "42"})
	fmt.Println(expr.Match(props), expr.Evaluate(props))
	fmt.Println(expr.Evaluate(message.EncodeProperties(map[string]string{"region": "eu"})))
	fmt.Println(expr.Evaluate(message.EncodeProperties(map[string]string{"region": "eu", "price": "cheap"})))

	// TAG subscriptions: hash codes for the consume queue, tags for the client.
	tags, _ := filter.ParseTagExpression("TagA || TagB")
	fmt.Println(tags.Tags, tags.Codes, tags.MatchCode(message.TagsHash("TagB")))
	// Output:
	// invalid SQL92 expression at column 10: expected an expression, found end of expression
	// true TRUE
	// UNKNOWN
	// FAILED
	// [TagA TagB] [2598919 2598920] true
}
