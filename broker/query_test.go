package broker

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/message"
)

func TestQueryAndViewMessage(t *testing.T) {
	tb := startBroker(t, nil)
	resp := tb.invoke(t, sendV1("QM", 0, props("KEYS", "order-1 order-2", "UNIQ_KEY", "0A0000010000000000000000000000AA"), []byte("q")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	id := ext(t, resp, "msgId")
	_, phy, err := message.DecodeOffsetMsgID(id)
	require.NoError(t, err)
	tb.waitDispatched(t, "QM", 0, 1)

	resp = tb.invoke(t, request(codec.ReqViewMessageById, "topic", "QM", "offset", strconv.FormatInt(phy, 10)))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	recs := decodeRecords(t, resp.Body)
	require.Len(t, recs, 1)
	require.Equal(t, "q", string(recs[0].Body))
	resp = tb.invoke(t, request(codec.ReqViewMessageById, "offset", "99999999"))
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "can not find message by the offset, 99999999", resp.Remark)

	now := strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10)
	query := func(key, unique string) *codec.Frame {
		var r *codec.Frame
		require.Eventually(t, func() bool {
			r = tb.invoke(t, request(codec.ReqQueryMessage, "topic", "QM", "key", key, "maxNum", "16", "beginTimestamp", "0", "endTimestamp", now, "_UNIQUE_KEY_QUERY", unique))
			return r.Code == int32(codec.RespSuccess)
		}, 5*time.Second, 10*time.Millisecond)
		return r
	}
	resp = query("order-2", "false")
	recs = decodeRecords(t, resp.Body)
	require.Len(t, recs, 1)
	require.Equal(t, "q", string(recs[0].Body))
	resp = query("0A0000010000000000000000000000AA", "true")
	require.Len(t, decodeRecords(t, resp.Body), 1)

	resp = tb.invoke(t, request(codec.ReqQueryMessage, "topic", "QM", "key", "nope", "maxNum", "16", "beginTimestamp", "0", "endTimestamp", now))
	require.Equal(t, int32(codec.RespQueryNotFound), resp.Code)
	require.Equal(t, "can not find message, maybe time range not correct", resp.Remark)
}
