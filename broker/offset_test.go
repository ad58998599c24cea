package broker

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

func TestConsumerOffsets(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("OF", 2, 6, 0)
	q := func(group string, queue string) *codec.Frame {
		return tb.invoke(t, request(codec.ReqQueryConsumerOffset, "consumerGroup", group, "topic", "OF", "queueId", queue))
	}
	// A queue that never held a message, no offset: 0, as Java 4.9.x (5.x
	// answers QUERY_NOT_FOUND, and a LAST_OFFSET consumer then skips what
	// arrives before its GET_MAX_OFFSET: issue #19 S1).
	resp := q("cg", "0")
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.Equal(t, "0", ext(t, resp, "offset"))
	// Unless the client says not to set zero.
	resp = tb.invoke(t, request(codec.ReqQueryConsumerOffset, "consumerGroup", "cg", "topic", "OF", "queueId", "0", "setZeroIfNotFound", "false"))
	require.Equal(t, int32(codec.RespQueryNotFound), resp.Code)

	// A young queue whose first message is still there: offset 0.
	resp = tb.invoke(t, sendV1("OF", 0, "", []byte("m")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	tb.waitDispatched(t, "OF", 0, 1)
	resp = q("cg", "0")
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.Equal(t, "0", ext(t, resp, "offset"))

	resp = tb.invoke(t, request(codec.ReqUpdateConsumerOffset, "consumerGroup", "cg", "topic", "OF", "queueId", "1", "commitOffset", "7"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	resp = q("cg", "1")
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.Equal(t, "7", ext(t, resp, "offset"))

	resp = tb.invoke(t, request(codec.ReqGetMaxOffset, "topic", "OF", "queueId", "0"))
	require.Equal(t, "1", ext(t, resp, "offset"))
	resp = tb.invoke(t, request(codec.ReqGetMinOffset, "topic", "OF", "queueId", "0"))
	require.Equal(t, "0", ext(t, resp, "offset"))
	resp = tb.invoke(t, request(codec.ReqSearchOffsetByTimestamp, "topic", "OF", "queueId", "0", "timestamp", "0"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.Equal(t, "0", ext(t, resp, "offset"))
	resp = tb.invoke(t, request(codec.ReqGetEarliestMsgStoretime, "topic", "OF", "queueId", "0"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.NotEqual(t, "0", ext(t, resp, "timestamp"))
}

// State written at Close is loaded by the next broker on the same store.
func TestStatePersistsAcrossRestart(t *testing.T) {
	root := t.TempDir()
	cfg := testConfig(root)
	open := func() (*Broker, func()) {
		st, err := openTestStore(&cfg)
		require.NoError(t, err)
		b, err := New(cfg, Deps{Logger: testLogger(), Store: st})
		require.NoError(t, err)
		return b, func() { require.NoError(t, b.Close()); require.NoError(t, st.Close()) }
	}
	b, closeB := open()
	b.topics.createIfAbsent("Persisted", 3, 6, 0)
	b.offsets.commit("cg", "Persisted", 2, 11)
	_, ok := b.groups.find("cgx")
	require.True(t, ok)
	require.NoError(t, b.Start())
	closeB()

	b, closeB = open()
	defer closeB()
	tc, ok := b.topics.get("Persisted")
	require.True(t, ok)
	require.Equal(t, int32(3), tc.ReadQueueNums)
	off, ok := b.offsets.query("cg", "Persisted", 2)
	require.True(t, ok)
	require.Equal(t, int64(11), off)
	_, ok = b.groups.get("cgx")
	require.True(t, ok)
}

// Once the first message is far behind the commit-log end (out of the
// in-memory window), a new group gets QUERY_NOT_FOUND.
func TestQueryOffsetColdQueue(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("Cold", 1, 6, 0)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendV1("Cold", 0, "", []byte("m"))).Code)
	tb.waitDispatched(t, "Cold", 0, 1)
	off := newOffsetProcessor(tb.store, tb.offsets)
	require.True(t, off.firstInMemory("Cold", 0))
	off.inMemory = -1
	require.False(t, off.firstInMemory("Cold", 0))
	require.False(t, off.firstInMemory("Cold", 5))
}
