package broker

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

// fillQueue sends n messages tagged TagA to topic's queue 0 and waits
// until they are dispatched.
func fillQueue(t *testing.T, tb *testBroker, topic string, n int) {
	t.Helper()
	for i := range n {
		resp := tb.invoke(t, sendV1(topic, 0, props("TAGS", "TagA"), []byte(fmt.Sprint("m-", i))))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	tb.waitDispatched(t, topic, 0, int64(n))
}

// A master answers suggestWhichBrokerId as Java 5.3.3 does: with
// slaveReadEnable, a pull reading further back than
// accessMessageInMemoryMaxRatio of RAM gets the group's
// whichBrokerWhenConsumeSlowly (1 by default), even when the filter
// matched nothing; a caught-up pull gets the group's brokerId (0); without
// slaveReadEnable always 0.
func TestSuggestWhichBrokerIDOnMaster(t *testing.T) {
	cases := []struct {
		name      string
		slaveRead bool
		ratio     int
		want      string
	}{
		{"slaveRead, ratio 0", true, 0, "1"},
		{"slaveRead, default ratio", true, 40, "0"},
		{"no slaveRead, ratio 0", false, 0, "0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tb := startBroker(t, func(c *Config) {
				c.SlaveReadEnable = tc.slaveRead
				c.AccessMessageInMemoryMaxRatio = tc.ratio
			})
			fillQueue(t, tb, "Sugg", 5)
			resp := tb.invoke(t, pullReq("g", "Sugg", 0, 0, pullFlagSubscription, 0, "*"))
			require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
			require.Len(t, decodeRecords(t, resp.Body), 5)
			require.Equal(t, tc.want, ext(t, resp, "suggestWhichBrokerId"))

			// Nothing matches the tag: Java still judges the units it
			// scanned (PULL_RETRY_IMMEDIATELY, same suggestion).
			resp = tb.invoke(t, pullReq("g", "Sugg", 0, 0, pullFlagSubscription, 0, "TagB"))
			require.Equal(t, int32(codec.RespPullRetryImmediately), resp.Code, resp.Remark)
			require.Equal(t, tc.want, ext(t, resp, "suggestWhichBrokerId"))

			// Past the end the offset is not in the queue: no suggestion.
			resp = tb.invoke(t, pullReq("g", "Sugg", 0, 5, pullFlagSubscription, 0, "*"))
			require.Equal(t, int32(codec.RespPullNotFound), resp.Code, resp.Remark)
			require.Equal(t, "0", ext(t, resp, "suggestWhichBrokerId"))
		})
	}
}

// The group's whichBrokerWhenConsumeSlowly and brokerId are what the
// master suggests.
func TestSuggestWhichBrokerIDFromGroup(t *testing.T) {
	for _, ratio := range []int{0, 40} {
		tb := startBroker(t, func(c *Config) {
			c.SlaveReadEnable = true
			c.AccessMessageInMemoryMaxRatio = ratio
		})
		sg := body.NewSubscriptionGroupConfig("g2")
		sg.WhichBrokerWhenConsumeSlowly, sg.BrokerID = 3, 2
		require.NoError(t, tb.groups.put(sg))
		fillQueue(t, tb, "Sugg", 2)
		resp := tb.invoke(t, pullReq("g2", "Sugg", 0, 0, pullFlagSubscription, 0, "*"))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
		want := map[int]string{0: "3", 40: "2"}[ratio]
		require.Equal(t, want, ext(t, resp, "suggestWhichBrokerId"), "ratio %d", ratio)
	}
}

// A slave (slaveReadEnable) suggests as a master does, and answers as
// Java 5.3.3's slave (checked by hand against it): a caught-up pull is
// PULL_NOT_FOUND (no redirect to the master: Java's redirect branch
// compares getMinBrokerIdInGroup, which returns the broker's own id), and
// an offset outside the queue is neither corrected nor reported moved
// (PULL_RETRY_IMMEDIATELY, nextBeginOffset = the requested offset).
func TestSuggestWhichBrokerIDOnSlave(t *testing.T) {
	root := t.TempDir()
	master, stop := startBrokerAt(t, root, nil)
	fillQueue(t, master, "Sugg", 5)
	stop()

	for _, ratio := range []int{40, 0} {
		slave, stop := startBrokerAt(t, root, func(c *Config) {
			c.BrokerRole, c.BrokerID = "SLAVE", 1
			c.SlaveReadEnable = true
			c.AccessMessageInMemoryMaxRatio = ratio
		})
		require.True(t, slave.IsSlave())
		want := map[int]string{40: "0", 0: "1"}[ratio]
		resp := slave.invoke(t, pullReq("g", "Sugg", 0, 0, pullFlagSubscription, 0, "*"))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
		require.Len(t, decodeRecords(t, resp.Body), 5)
		require.Equal(t, want, ext(t, resp, "suggestWhichBrokerId"), "ratio %d", ratio)

		resp = slave.invoke(t, pullReq("g", "Sugg", 0, 0, pullFlagSubscription, 0, "TagB"))
		require.Equal(t, int32(codec.RespPullRetryImmediately), resp.Code, resp.Remark)
		require.Equal(t, want, ext(t, resp, "suggestWhichBrokerId"), "ratio %d", ratio)

		resp = slave.invoke(t, pullReq("g", "Sugg", 0, 5, pullFlagSubscription, 0, "*"))
		require.Equal(t, int32(codec.RespPullNotFound), resp.Code, resp.Remark)
		require.Equal(t, "0", ext(t, resp, "suggestWhichBrokerId"))

		resp = slave.invoke(t, pullReq("g", "Sugg", 0, 1<<20, pullFlagSubscription, 0, "*"))
		require.Equal(t, int32(codec.RespPullRetryImmediately), resp.Code, resp.Remark)
		require.Equal(t, "OFFSET_OVERFLOW_BADLY", resp.Remark)
		require.Equal(t, "1048576", ext(t, resp, "nextBeginOffset"))
		require.Equal(t, "0", ext(t, resp, "suggestWhichBrokerId"))
		stop()
	}
}

// slaveReadEnable and accessMessageInMemoryMaxRatio apply at once when
// UPDATE_BROKER_CONFIG changes them, as on Java 5.3.3 (checked by hand):
// the suggestion follows the ratio, and a slave refuses pulls once
// slaveReadEnable is off.
func TestSuggestLiveConfig(t *testing.T) {
	root := t.TempDir()
	master, stop := startBrokerAt(t, root, func(c *Config) { c.SlaveReadEnable = true })
	fillQueue(t, master, "Sugg", 3)
	suggestion := func(tb *testBroker) string {
		resp := tb.invoke(t, pullReq("g", "Sugg", 0, 0, pullFlagSubscription, 0, "*"))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
		return ext(t, resp, "suggestWhichBrokerId")
	}
	update := func(tb *testBroker, conf string) {
		req := request(codec.ReqUpdateBrokerConfig)
		req.Body = []byte(conf)
		resp := tb.invoke(t, req)
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	require.Equal(t, "0", suggestion(master))
	update(master, "accessMessageInMemoryMaxRatio=0\n")
	require.Equal(t, "1", suggestion(master))
	update(master, "slaveReadEnable=false\n")
	require.Equal(t, "0", suggestion(master))
	stop()

	slave, _ := startBrokerAt(t, root, func(c *Config) {
		c.BrokerRole, c.BrokerID = "SLAVE", 1
		c.SlaveReadEnable = true
	})
	require.Equal(t, "0", suggestion(slave))
	update(slave, "slaveReadEnable=false\n")
	resp := slave.invoke(t, pullReq("g", "Sugg", 0, 0, pullFlagSubscription, 0, "*"))
	require.Equal(t, int32(codec.RespSystemBusy), resp.Code)
	require.Equal(t, remarks.RejectRequest, resp.Remark)
}

// With slaveReadEnable and every pull judged slow, the pull round trip
// still allocates nothing: records found (the suggestion from the last
// record) and none matching (the consume-queue lookup).
func TestPullSuggestAllocs(t *testing.T) {
	skipAllocsUnderRace(t)
	tb := startBroker(t, func(c *Config) {
		c.SlaveReadEnable = true
		c.AccessMessageInMemoryMaxRatio = 0
	})
	rc := dialRawClient(t, tb.addr)
	wire := sendV2Wire("AllocSugg", 0, props("TAGS", "TagA"), make([]byte, 1024))
	for range 32 {
		require.Equal(t, int(codec.RespSuccess), replyCode(t, rc.roundTrip(wire)))
	}
	tb.waitDispatched(t, "AllocSugg", 0, 32)
	for _, c := range []struct {
		tag  string
		code codec.ResponseCode
	}{{"TagA", codec.RespSuccess}, {"TagB", codec.RespPullRetryImmediately}} {
		pf := pullReq("cg", "AllocSugg", 0, 0, pullFlagSubscription, 0, c.tag)
		pf.Opaque = 2
		pull := pf.AppendTo(nil)
		var hdr []byte
		get := func() {
			p := rc.roundTrip(pull)
			if code := replyCode(t, p); code != int(c.code) {
				t.Fatalf("pull %s answered %d", c.tag, code)
			}
			hdr = p[4 : 4+int(binary.BigEndian.Uint32(p)&0xFFFFFF)]
		}
		for range 100 {
			get()
		}
		n := testing.AllocsPerRun(300, get)
		t.Logf("%.2f allocs per pull round trip (%s)", n, c.tag)
		require.Contains(t, string(hdr), `"suggestWhichBrokerId":"1"`)
		require.Zero(t, n)
	}
}
