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

// checkAnswer is a producer's END_TRANSACTION answering a check.
func checkAnswer(chk *codec.Frame, typ int32) *codec.Frame {
	_, phy, _ := message.DecodeOffsetMsgID(chk.Value("offsetMsgId"))
	return request(codec.ReqEndTransaction, "producerGroup", "pg", "tranStateTableOffset", chk.Value("tranStateTableOffset"),
		"commitLogOffset", strconv.FormatInt(phy, 10), "commitOrRollback", strconv.Itoa(int(typ)),
		"fromTransactionCheck", "true", "msgId", chk.Value("msgId"), "transactionId", chk.Value("transactionId"))
}

func TestTransactionCommitRollbackAndCheck(t *testing.T) {
	// The timeout is what A and B have to be ended in before the checker
	// takes them as undecided too (and re-puts copies, moving the half
	// queue's offsets asserted below): 50 ms was not enough under load.
	tb := startBroker(t, func(c *Config) { c.TransactionCheckInterval = 100; c.TransactionTimeOut = 1000 })
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
	// The check names a copy appended to the half queue with its check
	// count raised (Java putBackHalfMsgQueue), not the original.
	require.Equal(t, "2", c.Value("queueOffset"))
	require.Equal(t, "3", chk.Value("tranStateTableOffset"))
	require.Equal(t, c.Value("transactionId"), chk.Value("transactionId"))
	require.NotEqual(t, c.Value("msgId"), chk.Value("offsetMsgId"))
	recs = decodeRecords(t, chk.Body)
	require.Len(t, recs, 1)
	require.Equal(t, "TX", recs[0].Topic)
	require.Equal(t, "CCCC", string(recs[0].Body))
	times, _ := message.Property(recs[0].Properties, message.PropertyTransactionCheckTimes)
	require.Equal(t, "1", times)
	// Answering it (as a check) commits it.
	resp, err = producer.Invoke(ctx, tb.addr, checkAnswer(chk, message.TransactionCommitType))
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

// txnProducer is a producer of group pg that records the checks it gets.
func txnProducer(t *testing.T, addr string) (*transport.Client, chan *codec.Frame) {
	t.Helper()
	checks := make(chan *codec.Frame, 64)
	r := transport.NewRouter()
	r.Handle(codec.ReqCheckTransactionState, nil, func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
		checks <- req
		return nil
	})
	p := transport.NewClient(transport.ClientConfig{Logger: testLogger(), Router: r, DialTimeout: 2 * time.Second})
	t.Cleanup(func() { p.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hb := request(codec.ReqHeartBeat)
	hb.Body = []byte(`{"clientID":"10.0.0.5@5","producerDataSet":[{"groupName":"pg"}],"consumerDataSet":[]}`)
	resp, err := p.Invoke(ctx, addr, hb)
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	return p, checks
}

func checkTimes(t *testing.T, chk *codec.Frame) int {
	t.Helper()
	recs := decodeRecords(t, chk.Body)
	require.Len(t, recs, 1)
	v, _ := message.Property(recs[0].Properties, message.PropertyTransactionCheckTimes)
	n, err := strconv.Atoi(v)
	require.NoError(t, err)
	return n
}

// In-doubt transactions survive a restart: the check count carries on
// from where it was, decided halves are not asked about again, and a
// check after the restart commits or rolls back as before.
func TestTransactionInDoubtSurvivesRestart(t *testing.T) {
	root := t.TempDir()
	// The timeout leaves the decisions below ample time to land before
	// the first check could copy their halves (a half checked before its
	// producer's decision arrives is asked about again — Java does the same).
	fast := func(c *Config) { c.TransactionCheckInterval = 50; c.TransactionTimeOut = 1500 }
	tb, stop := startBrokerAt(t, root, fast)
	tb.topics.createIfAbsent("TX", 1, 6, 0)
	// Two halves decided before the restart, two left in doubt.
	decidedC := tb.invoke(t, preparedSend("DCOM"))
	decidedR := tb.invoke(t, preparedSend("DROL"))
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, endTxn(decidedC, message.TransactionCommitType)).Code)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, endTxn(decidedR, message.TransactionRollbackType)).Code)
	_, checks := txnProducer(t, tb.addr)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, preparedSend("KEEP")).Code)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, preparedSend("DROP")).Code)
	seen := map[string]int{}
	deadline := time.After(10 * time.Second)
	for seen["KEEP"] < 2 || seen["DROP"] < 2 { // each checked twice before the restart
		select {
		case chk := <-checks:
			body := string(decodeRecords(t, chk.Body)[0].Body)
			require.Contains(t, []string{"KEEP", "DROP"}, body, "a decided half was checked")
			seen[body] = max(seen[body], checkTimes(t, chk))
		case <-deadline:
			t.Fatalf("checks before restart: %v", seen)
		}
	}
	stop()

	tb, _ = startBrokerAt(t, root, fast)
	_, checks = txnProducer(t, tb.addr)
	answered := map[string]bool{}
	deadline = time.After(10 * time.Second)
	for !answered["KEEP"] || !answered["DROP"] {
		select {
		case chk := <-checks:
			body := string(decodeRecords(t, chk.Body)[0].Body)
			require.Contains(t, []string{"KEEP", "DROP"}, body, "a decided half was checked after the restart")
			require.Greater(t, checkTimes(t, chk), seen[body], "check count restarted from zero")
			if answered[body] {
				continue
			}
			typ := message.TransactionCommitType
			if body == "DROP" {
				typ = message.TransactionRollbackType
			}
			resp := tb.invoke(t, checkAnswer(chk, typ))
			require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
			answered[body] = true
		case <-deadline:
			t.Fatalf("no check after restart; answered %v", answered)
		}
	}
	tb.waitDispatched(t, "TX", 0, 2)
	pulled := tb.invoke(t, pullReq("cg", "TX", 0, 0, pullFlagSubscription, 0, "*"))
	require.Equal(t, int32(codec.RespSuccess), pulled.Code)
	var bodies []string
	for _, r := range decodeRecords(t, pulled.Body) {
		bodies = append(bodies, string(r.Body))
	}
	require.Equal(t, []string{"DCOM", "KEEP"}, bodies)
}

// A half nobody answers is moved to TRANS_CHECK_MAX_TIME_TOPIC after
// transactionCheckMax checks, counting checks made before a restart.
func TestTransactionDiscardAfterMaxChecksAcrossRestart(t *testing.T) {
	root := t.TempDir()
	fast := func(c *Config) {
		c.TransactionCheckInterval = 30
		c.TransactionTimeOut = 1
		c.TransactionCheckMax = 6
	}
	tb, stop := startBrokerAt(t, root, fast)
	tb.topics.createIfAbsent("TX", 1, 6, 0)
	_, checks := txnProducer(t, tb.addr)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, preparedSend("LOST")).Code)
	before := 0
	for before < 3 {
		select {
		case chk := <-checks:
			before = checkTimes(t, chk)
		case <-time.After(10 * time.Second):
			t.Fatal("no checks")
		}
	}
	stop()
	tb, _ = startBrokerAt(t, root, fast)
	_, checks = txnProducer(t, tb.addr)
	require.Eventually(t, func() bool { return tb.store.MaxOffset(TopicTransCheckMax, 0) == 1 }, 10*time.Second, 5*time.Millisecond)
	_, ok := tb.topics.get(TopicTransCheckMax)
	require.True(t, ok, "discard topic not created")
	after := 0
	for len(checks) > 0 {
		after++
		require.Greater(t, checkTimes(t, <-checks), before)
	}
	require.LessOrEqual(t, before+after, 6, "checked more than transactionCheckMax times in total")
	pulled := tb.invoke(t, pullReq("ops", TopicTransCheckMax, 0, 0, pullFlagSubscription, 0, "*"))
	require.Equal(t, int32(codec.RespSuccess), pulled.Code)
	recs := decodeRecords(t, pulled.Body)
	require.Len(t, recs, 1)
	require.Equal(t, "LOST", string(recs[0].Body))
}
