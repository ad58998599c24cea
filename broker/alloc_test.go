package broker

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// The per-request parsing on the send and pull paths allocates nothing.
func TestHotPathParsingAllocs(t *testing.T) {
	send := sendV1("T", 1, props("TAGS", "a"), []byte("x"))
	pull := pullReq("g", "T", 0, 5, 6, 100, "a || b")
	var sh sendHeader
	var ph pullHeader
	var f tagFilter
	f.setExpr("x || y || z") // warm the codes buffer
	n := testing.AllocsPerRun(100, func() {
		sh.parse(send)
		ph.parse(pull)
		f.setExpr(ph.subscription)
	})
	require.Zero(t, n)
	require.Equal(t, "T", sh.topic)
	require.Equal(t, int32(1), sh.queueID)
	require.Equal(t, int64(5), ph.queueOffset)
	require.False(t, f.all)
	require.Len(t, f.codes, 2)
	require.True(t, f.match(int64(f.codes[1])))
	f.setExpr("*")
	require.True(t, f.all)
	_ = codec.ReqSendMessage
}
