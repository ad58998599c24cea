package filter

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/message"
)

func TestCacheSubscription(t *testing.T) {
	c := NewCache(8)
	rec := testRecord(t, testProps) // TAGS=TagA, a=3

	tag, err := c.Subscription("", "TagA || TagB")
	require.NoError(t, err)
	require.Nil(t, tag.SQL)
	require.False(t, tag.MatchAllCodes())
	require.True(t, tag.MatchCode(message.TagsHash("TagA")))
	require.False(t, tag.MatchCode(message.TagsHash("TagC")))
	require.True(t, tag.MatchRecord(rec))

	all, err := c.Subscription(TypeTag, "*")
	require.NoError(t, err)
	require.True(t, all.MatchAllCodes())

	_, err = c.Subscription(TypeTag, "||")
	require.ErrorIs(t, err, ErrTagSplit)

	sql, err := c.Subscription(TypeSQL92, "a = 3 AND TAGS = 'TagA'")
	require.NoError(t, err)
	require.True(t, sql.MatchAllCodes())
	require.True(t, sql.MatchCode(message.TagsHash("other")))
	require.True(t, sql.MatchRecord(rec))
	other, err := c.Subscription(TypeSQL92, "a = 4")
	require.NoError(t, err)
	require.False(t, other.MatchRecord(rec))
	require.Equal(t, 2, c.Len())

	_, err = c.Subscription(TypeSQL92, "a = ")
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	_, err = c.Subscription(TypeSQL92, "")
	require.ErrorAs(t, err, &pe)
	_, err = c.Subscription("CLASS", "x")
	require.ErrorIs(t, err, ErrUnsupportedType)
}

func TestCacheTagSubscriptionHitDoesNotAllocate(t *testing.T) {
	c := NewCache(2)
	for _, expr := range []string{"TagA || TagB", "*", ""} {
		_, err := c.Subscription(TypeTag, expr)
		require.NoError(t, err)
		allocs := testing.AllocsPerRun(100, func() {
			s, err := c.Subscription(TypeTag, expr)
			if err != nil || s.SQL != nil {
				t.Fatal("unexpected result")
			}
		})
		require.Zero(t, allocs, expr)
	}
	// Errors are cached too, and a full table starts over.
	_, err := c.Tag(" || ")
	require.NoError(t, err)
	for _, expr := range []string{"||", "a", "b", "||"} {
		f, err := c.Tag(expr)
		if expr == "||" {
			require.ErrorIs(t, err, ErrTagSplit)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, []string{expr}, f.Tags)
	}
	c.mu.Lock()
	require.LessOrEqual(t, len(c.tags), 2)
	c.mu.Unlock()
	nothing, err := c.Tag(" || ")
	require.NoError(t, err)
	require.False(t, nothing.MatchCode(0))
	require.False(t, nothing.MatchCode(message.TagsHash("a")))
}
