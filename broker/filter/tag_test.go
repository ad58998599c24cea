package filter

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/message"
)

func TestParseTagExpression(t *testing.T) {
	cases := []struct {
		expr string
		all  bool
		tags []string
		err  error
	}{
		{"", true, nil, nil},
		{"*", true, nil, nil},
		{"TagA", false, []string{"TagA"}, nil},
		{"TagA || TagB", false, []string{"TagA", "TagB"}, nil},
		{" TagA ||TagB||  TagC ", false, []string{"TagA", "TagB", "TagC"}, nil},
		{"TagA || TagA", false, []string{"TagA"}, nil},
		{"TagA||", false, []string{"TagA"}, nil},
		{"||TagA", false, []string{"TagA"}, nil},
		{"|||", false, []string{"|"}, nil},
		{" * ", false, []string{"*"}, nil}, // compat: only exactly "*" means all
		{" || ", false, nil, nil},          // compat: matches nothing on the broker
		{"||", false, nil, ErrTagSplit},
		{"||||", false, nil, ErrTagSplit},
		{"标签 || TagB", false, []string{"标签", "TagB"}, nil},
	}
	for _, tc := range cases {
		f, err := ParseTagExpression(tc.expr)
		if tc.err != nil {
			require.ErrorIs(t, err, tc.err, tc.expr)
			continue
		}
		require.NoError(t, err, tc.expr)
		require.Equal(t, tc.all, f.All, tc.expr)
		require.Equal(t, tc.tags, f.Tags, tc.expr)
		require.Len(t, f.Codes, len(tc.tags))
		for i, tag := range tc.tags {
			require.Equal(t, message.JavaStringHash(tag), f.Codes[i])
		}
	}
}

func TestTagFilterMatch(t *testing.T) {
	f, err := ParseTagExpression("TagA || TagB")
	require.NoError(t, err)
	// Java: "TagA".hashCode() == 2598919.
	require.Equal(t, int32(2598919), f.Codes[0])
	require.True(t, f.MatchCode(2598919))
	require.True(t, f.MatchCode(message.TagsHash("TagB")))
	require.False(t, f.MatchCode(message.TagsHash("TagC")))
	require.False(t, f.MatchCode(0)) // untagged message
	// compat: Java compares the low 32 bits of the tags code.
	require.True(t, f.MatchCode(1<<32|2598919))
	require.True(t, f.MatchTags("TagA"))
	require.False(t, f.MatchTags("TagA||TagB"))
	require.False(t, f.MatchTags(""))

	all, err := ParseTagExpression("*")
	require.NoError(t, err)
	require.True(t, all.MatchCode(0))
	require.True(t, all.MatchCode(12345))
	require.True(t, all.MatchTags(""))

	none, err := ParseTagExpression(" || ")
	require.NoError(t, err)
	require.False(t, none.MatchCode(0))
	require.False(t, none.MatchCode(message.TagsHash("x")))
	require.True(t, none.MatchTags("x")) // the Java client filters nothing then
}

func TestTagFilterFromSet(t *testing.T) {
	f := TagFilterFromSet("TagA || 标签", []string{"TagA", "标签"})
	require.False(t, f.All)
	require.Equal(t, []int32{message.JavaStringHash("TagA"), message.JavaStringHash("标签")}, f.Codes)
	require.True(t, f.MatchCode(message.TagsHash("标签")))
	require.True(t, TagFilterFromSet("*", nil).All)
	require.True(t, TagFilterFromSet("", []string{"x"}).All)
}

func TestTagFilterDoesNotAliasInput(t *testing.T) {
	b := []byte("TagA || TagB")
	f, err := ParseTagExpression(unsafeString(b))
	require.NoError(t, err)
	for i := range b {
		b[i] = 'x'
	}
	require.Equal(t, []string{"TagA", "TagB"}, f.Tags)
}

func TestIsTagType(t *testing.T) {
	require.True(t, IsTagType(""))
	require.True(t, IsTagType("TAG"))
	require.False(t, IsTagType("SQL92"))
	require.False(t, IsTagType("tag"))
}
