package javaprops

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type fieldsConf struct {
	S  string
	B  bool
	N  int
	L  int64
	Ms time.Duration
}

var testFields = Fields[fieldsConf]{
	String("s", func(c *fieldsConf) *string { return &c.S }),
	Bool("b", func(c *fieldsConf) *bool { return &c.B }),
	Int("n", func(c *fieldsConf) *int { return &c.N }),
	Int64("l", func(c *fieldsConf) *int64 { return &c.L }),
	Millis("ms", func(c *fieldsConf) *time.Duration { return &c.Ms }),
}

func TestFields(t *testing.T) {
	var c fieldsConf
	for k, v := range map[string]string{"s": " x ", "b": "TRUE", "n": " 7", "l": "9000000000", "ms": "1500"} {
		f, ok := testFields.Find(k)
		require.True(t, ok, k)
		require.NoError(t, f.Set(&c, v))
	}
	require.Equal(t, fieldsConf{S: " x ", B: true, N: 7, L: 9000000000, Ms: 1500 * time.Millisecond}, c)
	f, _ := testFields.Find("b")
	require.NoError(t, f.Set(&c, "yes")) // compat: Boolean.parseBoolean
	require.False(t, c.B)
	f, _ = testFields.Find("n")
	require.ErrorContains(t, f.Set(&c, "seven"), "n: ")
	_, ok := testFields.Find("nope")
	require.False(t, ok)
	require.Equal(t, Props{{"s", " x "}, {"b", "false"}, {"n", "7"}, {"l", "9000000000"}, {"ms", "1500"}}, testFields.Properties(&c))
}
