package broker

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/store/timer"
)

// pullN pulls queue 0 of topic from offset 0 until n records arrived.
func (tb *testBroker) pullN(t *testing.T, topic string, n int, within time.Duration) []message.Ext {
	t.Helper()
	var out []message.Ext
	deadline := time.Now().Add(within)
	for len(out) < n {
		require.True(t, time.Now().Before(deadline), "got %d of %d records of %s", len(out), n, topic)
		resp := tb.invoke(t, pullReq("cg", topic, 0, int64(len(out)), pullFlagSubscription, 500, "*"))
		if resp.Code == int32(codec.RespSuccess) {
			out = append(out, decodeRecords(t, resp.Body)...)
		}
	}
	return out
}

func timerAt(at int64, body string) *codec.Frame {
	return sendV1("TM", 0, props("TIMER_DELIVER_MS", strconv.FormatInt(at, 10), "UNIQ_KEY", body), []byte(body))
}

func TestTimerMessages(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("TM", 1, 6, 0)
	deliverAt := time.Now().Add(2500 * time.Millisecond).UnixMilli() // rounds down to >= now+1.5s, after "sooner"
	resp := tb.invoke(t, sendV1("TM", 0, props("TIMER_DELIVER_MS", strconv.FormatInt(deliverAt, 10)), []byte("later")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	resp = tb.invoke(t, sendV1("TM", 0, props("TIMER_DELAY_SEC", "1"), []byte("sooner")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	resp = tb.invoke(t, sendV1("TM", 0, props("TIMER_DELIVER_MS", "1"), []byte("now")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	tb.waitDispatched(t, timerTopic, 0, 2)
	tb.waitDispatched(t, "TM", 0, 1) // the past-due one goes straight through

	recs := tb.pullN(t, "TM", 3, 10*time.Second)
	require.Equal(t, "now", string(recs[0].Body))
	require.Equal(t, "sooner", string(recs[1].Body))
	require.Equal(t, "later", string(recs[2].Body))
	// Never early: re-stored into the real topic no sooner than requested,
	// and within one precision step after.
	require.GreaterOrEqual(t, recs[2].StoreTimestamp, deliverAt)
	require.Less(t, recs[2].StoreTimestamp, deliverAt+1000+500)
	_, ok := message.Property(recs[2].Properties, "TIMER_DEQUEUE_MS")
	require.True(t, ok)
	_, ok = message.Property(recs[2].Properties, "TIMER_ENQUEUE_MS")
	require.True(t, ok)
	real, _ := message.Property(recs[2].Properties, "REAL_TOPIC")
	require.Equal(t, "TM", real, "like Java's stored records, REAL_TOPIC/REAL_QID stay on delivery")
	// The checkpoint (Java's file) reaches both timer records.
	require.Eventually(t, func() bool {
		ck, found, err := timer.ReadCheckpoint(timer.CheckpointPath(tb.cfg.StorePathRootDir))
		return err == nil && found && ck.LastTimerQueueOffset == 2 && ck.LastReadTimeMs > deliverAt-1000
	}, 5*time.Second, 10*time.Millisecond)

	// Beyond the maximum delay, or unparsable: MESSAGE_ILLEGAL.
	far := strconv.FormatInt(time.Now().Add(4*24*time.Hour).UnixMilli(), 10)
	resp = tb.invoke(t, sendV1("TM", 0, props("TIMER_DELIVER_MS", far), []byte("x")))
	require.Equal(t, int32(codec.RespMessageIllegal), resp.Code)
	resp = tb.invoke(t, sendV1("TM", 0, props("TIMER_DELAY_SEC", "soon"), []byte("x")))
	require.Equal(t, int32(codec.RespMessageIllegal), resp.Code)
	resp = tb.invoke(t, sendV1("TM", 0, props("TIMER_DELIVER_MS", "1", "TIMER_DEL_UNIQKEY", "TM+x"), []byte("x")))
	require.Equal(t, int32(codec.RespMessageIllegal), resp.Code, "a delete marker in the past")
}

// Config keys: timerMaxDelaySec bounds the delay; timerWheelEnable=false
// refuses timers with Java's SYSTEM_ERROR remark.
func TestTimerConfigKeys(t *testing.T) {
	tb := startBroker(t, func(c *Config) { c.TimerMaxDelaySec = 10 })
	tb.topics.createIfAbsent("TM", 1, 6, 0)
	resp := tb.invoke(t, sendV1("TM", 0, props("TIMER_DELAY_SEC", "11"), []byte("x")))
	require.Equal(t, int32(codec.RespMessageIllegal), resp.Code)
	require.Contains(t, resp.Remark, "max delay 10000ms")
	resp = tb.invoke(t, sendV1("TM", 0, props("TIMER_DELAY_SEC", "9"), []byte("x")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	// A delay level wins over timer properties (which Java drops).
	resp = tb.invoke(t, sendV1("TM", 0, props("DELAY", "1", "TIMER_DELAY_SEC", "99"), []byte("lvl")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	tb.waitDispatched(t, TopicSchedule, 0, 1)
	require.Equal(t, int64(1), tb.store.MaxOffset(timerTopic, 0))

	off := startBroker(t, func(c *Config) { c.TimerWheelEnable = false })
	off.topics.createIfAbsent("TM", 1, 6, 0)
	resp = off.invoke(t, sendV1("TM", 0, props("TIMER_DELAY_SEC", "5"), []byte("x")))
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "accurate timer message is not enabled, timerWheelEnable is false", resp.Remark)
	_, err := os.Stat(filepath.Join(off.cfg.StorePathRootDir, "timerwheel"))
	require.True(t, os.IsNotExist(err), "no wheel when disabled")

	cfg := DefaultConfig()
	for k, want := range map[string]int64{"timerPrecisionMs": 1000, "timerMaxDelaySec": 259200, "timerRollWindowSlot": 172800} {
		found := false
		for _, kv := range cfg.Properties() {
			if kv[0] == k {
				found = true
				require.Equal(t, strconv.FormatInt(want, 10), kv[1])
			}
		}
		require.True(t, found, k)
	}
	cfg.TimerPrecisionMs = 300
	require.Equal(t, int64(200), timerPrecision(&cfg))
}

// Many timers, spread over a few slots and several per slot (more than a
// delivery batch in one), all arrive, each no sooner than asked and at
// most about a slot later.
func TestTimerNeverEarly(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("TM", 1, 6, 0)
	base := time.Now().Add(1500 * time.Millisecond).UnixMilli()
	const n = 1500
	want := make(map[string]int64, n)
	for i := range n {
		at := base + int64(i%7)*173 // 7 distinct times over ~1 s
		if i >= 200 {
			at = base + 1500 // 1300 in one slot: more than one batch
		}
		body := "t" + strconv.Itoa(i)
		want[body] = at
		resp := tb.invoke(t, timerAt(at, body))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	recs := tb.pullN(t, "TM", n, 20*time.Second)
	seen := map[string]bool{}
	for _, r := range recs {
		at, ok := want[string(r.Body)]
		require.True(t, ok)
		require.False(t, seen[string(r.Body)], "duplicate %s", r.Body)
		seen[string(r.Body)] = true
		require.GreaterOrEqual(t, r.StoreTimestamp, at, "%s early", r.Body)
		require.Less(t, r.StoreTimestamp, at+2500, "%s too late", r.Body)
	}
	require.Len(t, seen, n)
}

// A delete marker (TIMER_DEL_UNIQKEY = topic+uniqKey, same time) cancels
// its timer and is itself never delivered.
func TestTimerDelete(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("TM", 1, 6, 0)
	at := time.Now().Add(1200 * time.Millisecond).UnixMilli()
	for _, f := range []*codec.Frame{
		timerAt(at, "keep1"),
		timerAt(at, "gone"),
		sendV1("TM", 0, props("TIMER_DELIVER_MS", strconv.FormatInt(at, 10), "UNIQ_KEY", "marker", "TIMER_DEL_UNIQKEY", "TM+gone"), []byte("marker")),
		timerAt(at+1000, "keep2"),
	} {
		resp := tb.invoke(t, f)
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	recs := tb.pullN(t, "TM", 2, 10*time.Second)
	require.Equal(t, "keep1", string(recs[0].Body))
	require.Equal(t, "keep2", string(recs[1].Body))
	require.Equal(t, int64(2), tb.store.MaxOffset("TM", 0))
}

// Pending timers survive a restart: those still due later, and those whose
// time passed while the broker was down (delivered at once on start).
// Nothing is delivered twice after a graceful stop.
func TestTimerRestart(t *testing.T) {
	root := t.TempDir()
	tb, stop := startBrokerAt(t, root, nil)
	tb.topics.createIfAbsent("TM", 1, 6, 0)
	now := time.Now().UnixMilli()
	want := map[string]int64{}
	send := func(tb *testBroker, body string, at int64) {
		want[body] = at
		resp := tb.invoke(t, timerAt(at, body))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	send(tb, "first", now+1200)      // delivered before the stop
	send(tb, "while-down", now+2600) // due while the broker is down
	send(tb, "after", now+6000)      // due after the restart
	for i := range 50 {
		send(tb, "bulk"+strconv.Itoa(i), now+2000+int64(i)*30)
	}
	tb.pullN(t, "TM", 1, 5*time.Second)
	stop()
	for time.Now().UnixMilli() < now+4000+1000 {
		time.Sleep(50 * time.Millisecond) // wall-clock time must pass while down
	}

	tb2, _ := startBrokerAt(t, root, nil)
	recs := tb2.pullN(t, "TM", len(want), 15*time.Second)
	seen := map[string]int{}
	for _, r := range recs {
		seen[string(r.Body)]++
		require.GreaterOrEqual(t, r.StoreTimestamp, want[string(r.Body)], "%s early", r.Body)
	}
	require.Len(t, seen, len(want))
	for k, c := range seen {
		require.Equal(t, 1, c, "%s delivered %d times", k, c)
	}
	after := recs[len(recs)-1]
	require.Equal(t, "after", string(after.Body))
	require.Less(t, after.StoreTimestamp, want["after"]+1500)
	require.Equal(t, int64(len(want)), tb2.store.MaxOffset("TM", 0))
}

// Past the roll window a timer is parked in a nearer slot and re-enqueued
// from there until due (Java's roll), never delivered early.
func TestTimerRoll(t *testing.T) {
	tb := startBroker(t, func(c *Config) { c.TimerRollWindowSlot = 2 })
	tb.topics.createIfAbsent("TM", 1, 6, 0)
	at := time.Now().Add(4500 * time.Millisecond).UnixMilli()
	resp := tb.invoke(t, timerAt(at, "rolled"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	recs := tb.pullN(t, "TM", 1, 10*time.Second)
	require.GreaterOrEqual(t, recs[0].StoreTimestamp, at)
	require.Less(t, recs[0].StoreTimestamp, at+1500)
	rolls, ok := message.Property(recs[0].Properties, "TIMER_ROLL_TIMES")
	require.True(t, ok)
	n, _ := strconv.Atoi(rolls)
	require.GreaterOrEqual(t, n, 1)
	require.Greater(t, tb.store.MaxOffset(timerTopic, 0), int64(1), "re-enqueued through the timer topic")
}

// A crash can leave the checkpoint behind the wheel (it is written once a
// second). Emulated by rewinding it after a stop: on restart, slots after
// the checkpointed read time are delivered again (at least once), while
// records already chained are not chained twice (the enqueue resumes
// after the last timerlog unit's record).
func TestTimerCheckpointBehind(t *testing.T) {
	root := t.TempDir()
	tb, stop := startBrokerAt(t, root, nil)
	tb.topics.createIfAbsent("TM", 1, 6, 0)
	now := time.Now().UnixMilli()
	want := map[string]int64{}
	for i := range 10 {
		for _, at := range []int64{now + 1200, now + 5500} {
			body := strconv.Itoa(i) + "@" + strconv.FormatInt(at-now, 10)
			want[body] = at
			resp := tb.invoke(t, timerAt(at, body))
			require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
		}
	}
	tb.pullN(t, "TM", 10, 5*time.Second)
	stop()

	path := timer.CheckpointPath(root)
	ck, found, err := timer.ReadCheckpoint(path)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, int64(20), ck.LastTimerQueueOffset)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	binary.BigEndian.PutUint64(raw[0:], uint64(now/1000*1000-1000)) // lastReadTimeMs: before every timer
	binary.BigEndian.PutUint64(raw[16:], 0)                         // lastTimerQueueOffset
	binary.BigEndian.PutUint64(raw[24:], 0)                         // masterTimerQueueOffset
	binary.BigEndian.PutUint64(raw[64:], 0)                         // no in-slot progress
	require.NoError(t, os.WriteFile(path, raw, 0o644))

	tb2, _ := startBrokerAt(t, root, nil)
	recs := tb2.pullN(t, "TM", 30, 15*time.Second)
	seen := map[string]int{}
	for _, r := range recs {
		seen[string(r.Body)]++
		require.GreaterOrEqual(t, r.StoreTimestamp, want[string(r.Body)], "%s early", r.Body)
	}
	require.Len(t, seen, 20)
	for body, c := range seen {
		if want[body] == now+1200 {
			require.Equal(t, 2, c, "%s: its slot was redelivered once", body)
		} else {
			require.Equal(t, 1, c, "%s: chained and delivered once", body)
		}
	}
	require.Eventually(t, func() bool {
		ck, _, err := timer.ReadCheckpoint(path)
		return err == nil && ck.LastTimerQueueOffset == 20
	}, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, int64(30), tb2.store.MaxOffset("TM", 0))
}

// The 4.x-era __STARTDELIVERTIME is honoured as an absolute delivery time.
func TestTimerStartDeliverTime(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("TM", 1, 6, 0)
	at := time.Now().Add(1500 * time.Millisecond).UnixMilli()
	resp := tb.invoke(t, sendV1("TM", 0, props("__STARTDELIVERTIME", strconv.FormatInt(at, 10)), []byte("oms")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	tb.waitDispatched(t, timerTopic, 0, 1)
	recs := tb.pullN(t, "TM", 1, 10*time.Second)
	require.Equal(t, "oms", string(recs[0].Body))
	require.GreaterOrEqual(t, recs[0].StoreTimestamp, at)
	require.Less(t, recs[0].StoreTimestamp, at+1500)
}

// GET_BROKER_RUNTIME_INFO reports the wheel's progress: every timer record
// chained (timerOffsetBehind 0) and delivery within a second of the clock.
func TestTimerRuntimeInfo(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("TM", 1, 6, 0)
	at := time.Now().Add(time.Minute).UnixMilli()
	resp := tb.invoke(t, sendV1("TM", 0, props("TIMER_DELIVER_MS", strconv.FormatInt(at, 10)), []byte("x")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	tb.waitDispatched(t, timerTopic, 0, 1)
	require.Eventually(t, func() bool {
		info := string(tb.invoke(t, request(codec.ReqGetBrokerRuntimeInfo)).Body)
		return strings.Contains(info, `"timerOffsetBehind":"0"`) &&
			(strings.Contains(info, `"timerReadBehind":"0"`) || strings.Contains(info, `"timerReadBehind":"1"`))
	}, 5*time.Second, 10*time.Millisecond)
	// Seen from ten seconds later, delivery is ten seconds behind.
	read, offs := tb.timer.behind(time.Now().Add(10 * time.Second).UnixMilli())
	require.InDelta(t, 10, read, 1)
	require.Zero(t, offs)
}
