package storecompat

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/conformance/harness"
)

// Request codes of the 5.x POP family (JSON headers only).
const (
	codeSendMessage = 10
	codePopMessage  = 200050
	codeAckMessage  = 200051
)

// TestStoreCompatPop hands a store with in-flight POP checkpoints over
// ours → Java and Java → ours: the writer pops two messages (checkpoint in
// rmq_sys_REVIVE_LOG_DefaultCluster; Java's through its timer wheel) and
// acks one, stops before their invisible time, and the reader started on
// the same store revives exactly the unacked one into
// %RETRY%<group>_<topic> with RECONSUME_TIMES 1: each reads the other's
// checkpoint, ack and revive offset as its own.
func TestStoreCompatPop(t *testing.T) {
	env, dir := prepare(t)
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Second)
	defer cancel()
	rig, err := NewRig(ctx, env, dir)
	require.NoError(t, err)
	defer rig.Close()
	t.Run("ours_to_java", func(t *testing.T) { handOverPop(ctx, t, rig, Ours, Java, 4000) })
	// The Java broker takes 10–17 s to stop here: a longer invisible time.
	t.Run("java_to_ours", func(t *testing.T) { handOverPop(ctx, t, rig, Java, Ours, 40000) })
}

func handOverPop(ctx context.Context, t *testing.T, rig *Rig, writer, reader Side, invisible int) {
	topic, group := "PopSC"+string(writer), "popg"
	store := filepath.Join(rig.Dir, fmt.Sprintf("pop-%s-to-%s", writer, reader))

	bo, err := rig.StartBroker(ctx, writer, store)
	require.NoError(t, err)
	stopped := false
	defer func() {
		if !stopped {
			_, _ = bo.Stop(5 * time.Second)
		}
	}()
	cl := harness.Attach(harness.External, rig.NamesrvAddr, bo.Addr)
	require.NoError(t, cl.CreateTopic(ctx, topic, 1, nil))
	for i := range 2 {
		code, remark, _, _, err := call(ctx, bo.Addr, codeSendMessage, map[string]string{
			"producerGroup": "pg", "topic": topic, "defaultTopic": "TBW102", "defaultTopicQueueNums": "4", "queueId": "0",
			"sysFlag": "0", "bornTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10), "flag": "0",
			"properties": "TAGS\x01a\x02", "reconsumeTimes": "0", "unitMode": "false"}, []byte(fmt.Sprintf("m%d", i)))
		require.NoError(t, err)
		require.Equal(t, int32(codeSuccess), code, remark)
	}
	_, err = WaitMaxOffset(ctx, bo.Addr, topic, 0, 2, 10*time.Second)
	require.NoError(t, err)
	code, remark, ext, body, err := call(ctx, bo.Addr, codePopMessage, map[string]string{
		"consumerGroup": group, "topic": topic, "queueId": "0", "maxMsgNums": "32", "invisibleTime": strconv.Itoa(invisible),
		"pollTime": "0", "bornTime": strconv.FormatInt(time.Now().UnixMilli(), 10), "initMode": "0"}, nil)
	require.NoError(t, err)
	require.Equal(t, int32(codeSuccess), code, remark)
	recs, err := SplitRecords(body)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	t.Logf("popped: %v", ext)
	// Ack m0 with the extraInfo a Java client builds from the header.
	extra := "0 " + ext["popTime"] + " " + ext["invisibleTime"] + " " + ext["reviveQid"] + " 0 broker-a 0 0"
	code, remark, _, _, err = call(ctx, bo.Addr, codeAckMessage, map[string]string{
		"consumerGroup": group, "topic": topic, "queueId": "0", "extraInfo": extra, "offset": "0"}, nil)
	require.NoError(t, err)
	require.Equal(t, int32(codeSuccess), code, remark)
	_, err = bo.Stop(30 * time.Second)
	stopped = true
	require.NoError(t, err)
	popTime, _ := strconv.ParseInt(ext["popTime"], 10, 64)
	require.Less(t, time.Now().UnixMilli(), popTime+int64(invisible), "handed over while still invisible")

	bj, err := rig.StartBroker(ctx, reader, store)
	require.NoError(t, err)
	defer func() { _, _ = bj.Stop(30 * time.Second) }()
	retry := "%RETRY%" + group + "_" + topic
	_, err = WaitMaxOffset(ctx, bj.Addr, retry, 0, 1, time.Duration(invisible)*time.Millisecond+120*time.Second)
	require.NoError(t, err, "the %s broker revives the %s checkpoint:\n%s", reader, writer, bj.Logs(200))
	end, err := MaxOffset(ctx, bj.Addr, retry, 0)
	require.NoError(t, err)
	got, err := PullRaw(ctx, bj.Addr, "reader", retry, 0, end, "*")
	require.NoError(t, err)
	if len(got) != 1 {
		rq, _ := strconv.Atoi(ext["reviveQid"])
		max, _ := MaxOffset(ctx, bj.Addr, "rmq_sys_REVIVE_LOG_DefaultCluster", rq)
		rev, _ := PullRaw(ctx, bj.Addr, "reader", "rmq_sys_REVIVE_LOG_DefaultCluster", rq, max, "*")
		for _, r := range rev {
			if m, err := decode(r); err == nil {
				t.Logf("revive log: %v %s", m.GetProperties(), m.Body)
			}
		}
	}
	require.Len(t, got, 1)
	m, err := decode(got[0])
	require.NoError(t, err)
	require.Equal(t, "m1", string(m.Body), "the acked m0 stays acked")
	require.Equal(t, int32(1), m.ReconsumeTimes)
	require.Equal(t, ext["popTime"], m.GetProperty("1ST_POP_TIME"))
}
