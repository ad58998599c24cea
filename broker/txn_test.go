package broker

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/codec/transport"
)

func preparedSend(body string) *codec.Frame {
	req := sendV1("TX", 0, props("TRAN_MSG", "true", "PGROUP", "pg", "UNIQ_KEY", "0A00000100000000000000000000"+body), []byte(body))
	req.Set("sysFlag", strconv.Itoa(int(message.TransactionPreparedType)))
	return req
}

func endTxn(send *codec.Frame, typ int32) *codec.Frame {
	_, phy, _ := message.DecodeOffsetMsgID(send.Value("msgId"))
	return request(codec.ReqEndTransaction, "producerGroup", "pg", "tranStateTableOffset", send.Value("queueOffset"),
		"commitLogOffset", strconv.FormatInt(phy, 10), "commitOrRollback", strconv.Itoa(int(typ)),
		"fromTransactionCheck", "false", "msgId", send.Value("transactionId"), "transactionId", send.Value("transactionId"))
}

func TestTransactionCommitRollbackAndCheck(t *testing.T) {
	tb := startBroker(t, func(c *Config) { c.TransactionCheckInterval = 100; c.TransactionTimeOut = 50 })
	tb.topics.createIfAbsent("TX", 1, 6, 0)
	checks := make(chan *codec.Frame, 8)
	r := transport.NewRouter()
	r.Handle(codec.ReqCheckTransactionState, nil, func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
		checks <- req
		return nil
	})
	producer := transport.NewClient(transport.ClientConfig{Logger: testLogger(), Router: r, DialTimeout: 2 * time.Second})
	defer producer.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hb := request(codec.ReqHeartBeat)
	hb.Body = []byte(`{"clientID":"10.0.0.5@5","producerDataSet":[{"groupName":"pg"}],"consumerDataSet":[]}`)
	resp, err := producer.Invoke(ctx, tb.addr, hb)
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code)

	a, err := producer.Invoke(ctx, tb.addr, preparedSend("AAAA"))
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), a.Code, a.Remark)
	require.Equal(t, "0", a.Value("queueOffset"))
	b, err := producer.Invoke(ctx, tb.addr, preparedSend("BBBB"))
	require.NoError(t, err)
	require.Equal(t, "1", b.Value("queueOffset"))
	tb.waitDispatched(t, TopicTransHalf, 0, 2)
	require.Equal(t, int64(0), tb.store.MaxOffset("TX", 0), "half message visible before commit")

	resp, err = producer.Invoke(ctx, tb.addr, endTxn(a, message.TransactionCommitType))
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	resp, err = producer.Invoke(ctx, tb.addr, endTxn(b, message.TransactionRollbackType))
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	tb.waitDispatched(t, "TX", 0, 1)
	pulled := tb.invoke(t, pullReq("cg", "TX", 0, 0, pullFlagSubscription, 0, "*"))
	require.Equal(t, int32(codec.RespSuccess), pulled.Code)
	recs := decodeRecords(t, pulled.Body)
	require.Len(t, recs, 1)
	require.Equal(t, "AAAA", string(recs[0].Body))
	require.Equal(t, message.TransactionCommitType, message.TransactionValue(recs[0].SysFlag))

	// A wrong group is refused.
	bad := endTxn(a, message.TransactionCommitType)
	bad.Set("producerGroup", "other")
	resp, err = producer.Invoke(ctx, tb.addr, bad)
	require.NoError(t, err)
	require.Equal(t, "The producer group wrong", resp.Remark)

	// An undecided one is checked with the producer.
	c, err := producer.Invoke(ctx, tb.addr, preparedSend("CCCC"))
	require.NoError(t, err)
	var chk *codec.Frame
	select {
	case chk = <-checks:
	case <-ctx.Done():
		t.Fatal("no CHECK_TRANSACTION_STATE")
	}
	require.Equal(t, c.Value("queueOffset"), chk.Value("tranStateTableOffset"))
	require.Equal(t, c.Value("transactionId"), chk.Value("transactionId"))
	require.Equal(t, c.Value("msgId"), chk.Value("offsetMsgId"))
	recs = decodeRecords(t, chk.Body)
	require.Len(t, recs, 1)
	require.Equal(t, "TX", recs[0].Topic)
	require.Equal(t, "CCCC", string(recs[0].Body))
	// Answering it (as a check) commits it.
	ans := endTxn(c, message.TransactionCommitType)
	ans.Set("fromTransactionCheck", "true")
	resp, err = producer.Invoke(ctx, tb.addr, ans)
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	tb.waitDispatched(t, "TX", 0, 2)
}

// END_TRANSACTION and CONSUMER_SEND_MSG_BACK name a record the client has
// just been told is stored; the broker reads it at once, in both flush
// modes, without waiting for dispatch.
func TestEndTransactionAndSendBackRightAfterSend(t *testing.T) {
	for _, mode := range []string{"ASYNC_FLUSH", "SYNC_FLUSH"} {
		t.Run(mode, func(t *testing.T) {
			tb := startBroker(t, func(c *Config) { c.FlushDiskType = mode })
			tb.topics.createIfAbsent("TX", 1, 6, 0)
			for i := range 30 {
				half := tb.invoke(t, preparedSend("H"+strconv.Itoa(i)))
				require.Equal(t, int32(codec.RespSuccess), half.Code, half.Remark)
				typ := message.TransactionCommitType
				if i%2 == 1 {
					typ = message.TransactionRollbackType
				}
				resp := tb.invoke(t, endTxn(half, typ))
				require.Equal(t, int32(codec.RespSuccess), resp.Code, "%d: %s", i, resp.Remark)

				sent := tb.invoke(t, sendV1("SB", 0, props("TAGS", "T"), []byte("m")))
				require.Equal(t, int32(codec.RespSuccess), sent.Code, sent.Remark)
				_, phy, err := message.DecodeOffsetMsgID(ext(t, sent, "msgId"))
				require.NoError(t, err)
				resp = tb.invoke(t, sendBackReq(phy, "cg", 0, 16))
				require.Equal(t, int32(codec.RespSuccess), resp.Code, "%d: %s", i, resp.Remark)
			}
			tb.waitDispatched(t, "TX", 0, 15)
		})
	}
}
