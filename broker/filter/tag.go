package filter

import (
	"errors"
	"strings"

	"github.com/rocketgo/rocketgo/codec/message"
)

// SubAll is the TAG expression that subscribes to every message.
const SubAll = "*"

// ErrTagSplit is Java FilterAPI's failure for a TAG expression made only of
// "||" separators ("subString split error").
var ErrTagSplit = errors.New("subString split error")

// TagFilter is a parsed TAG subscription. The broker matches consume-queue
// tags codes against Codes (MatchCode); the client then matches the actual
// TAGS property against Tags (MatchTags), as Java does.
type TagFilter struct {
	All   bool     // "*" or empty: every message, tagged or not
	Tags  []string // distinct tags, in expression order
	Codes []int32  // Java String.hashCode of each tag
}

// ParseTagExpression parses "TagA || TagB" the way Java's
// FilterAPI.buildSubscriptionData does: "" and exactly "*" mean all; each
// "||"-separated part is trimmed and empty parts are dropped. The result
// does not alias expr.
//
// compat: an expression with no non-empty part but some content (" || ")
// yields a filter that matches nothing on the broker, as in Java; one that
// is only separators ("||") fails with ErrTagSplit.
func ParseTagExpression(expr string) (TagFilter, error) {
	if expr == "" || expr == SubAll {
		return TagFilter{All: true}, nil
	}
	parts := strings.Split(expr, "||")
	// Java's String.split drops trailing empty strings.
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 0 {
		return TagFilter{}, ErrTagSplit
	}
	var f TagFilter
	for _, p := range parts {
		f.add(javaTrim(p))
	}
	return f, nil
}

// TagFilterFromSet builds the filter of a heartbeat-registered TAG
// subscription from its subString and tagsSet, computing the codes with
// Java's String.hashCode (the Go client hashes UTF-8 bytes, which differs
// for non-ASCII tags).
func TagFilterFromSet(subString string, tags []string) TagFilter {
	if subString == "" || subString == SubAll {
		return TagFilter{All: true}
	}
	var f TagFilter
	for _, t := range tags {
		f.add(t)
	}
	return f
}

func (f *TagFilter) add(tag string) {
	if tag == "" {
		return
	}
	for _, t := range f.Tags {
		if t == tag {
			return
		}
	}
	f.Tags = append(f.Tags, strings.Clone(tag))
	f.Codes = append(f.Codes, message.JavaStringHash(tag))
}

// MatchCode is the broker's consume-queue check (Java
// ExpressionMessageFilter.isMatchedByConsumeQueue): like Java, it compares
// the low 32 bits of the stored tags code.
func (f *TagFilter) MatchCode(tagsCode int64) bool {
	if f.All {
		return true
	}
	c := int32(tagsCode)
	for _, x := range f.Codes {
		if x == c {
			return true
		}
	}
	return false
}

// MatchTags is the consumer-side check of a message's TAGS property (Java
// PullAPIWrapper): with no tags subscribed every message passes, otherwise
// the message must carry one of them exactly.
func (f *TagFilter) MatchTags(tags string) bool {
	if len(f.Tags) == 0 {
		return true
	}
	for _, t := range f.Tags {
		if t == tags {
			return true
		}
	}
	return false
}
