package broker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/store"
)

// rawBytes reads the commit log [from, to) through the replication API.
func rawBytes(t *testing.T, st *store.Store, from, to int64) []byte {
	t.Helper()
	var out []byte
	for off := from; off < to; {
		var v store.RawView
		require.NoError(t, st.ReadRaw(off, int(min(to-off, 1<<20)), &v))
		require.NotEmpty(t, v.Data)
		out = append(out, v.Data...)
		off += int64(len(v.Data))
		v.Release()
	}
	return out
}

// Two brokers on loopback: a SYNC_MASTER with inSyncReplicas=2 and a
// slave pointed at it by haMasterAddress. Sends succeed while the slave
// runs and the slave's commit log equals the master's and serves pulls
// (slaveReadEnable); with the slave stopped, sends answer
// FLUSH_SLAVE_TIMEOUT (stored) after slaveTimeout, and recover when it
// returns.
func TestMasterSlavePair(t *testing.T) {
	master := startBroker(t, func(c *Config) {
		c.BrokerRole = "SYNC_MASTER"
		c.HaListenPort = 0
		c.InSyncReplicas, c.TotalReplicas = 2, 2
		c.SlaveTimeout = 300
		c.HaSendHeartbeatInterval = 200
	})
	haAddr := master.HAAddr()
	require.NotEmpty(t, haAddr)
	slaveRoot := t.TempDir()
	slaveCfg := func(c *Config) {
		c.BrokerRole = "SLAVE"
		c.BrokerID = 1
		c.HaMasterAddress = haAddr
		c.SlaveReadEnable = true
		c.HaSendHeartbeatInterval = 200
	}
	slave, stopSlave := startBrokerAt(t, slaveRoot, slaveCfg)
	require.True(t, slave.IsSlave())
	require.Eventually(t, func() bool { return len(master.HASlaves()) == 1 }, 5*time.Second, 5*time.Millisecond)

	const n = 50
	for i := range n {
		resp := master.invoke(t, sendV1("Repl", 0, props("UNIQ_KEY", fmt.Sprint("u", i)), []byte(fmt.Sprint("body-", i))))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	mst, sst := master.store.(*store.Store), slave.store.(*store.Store)
	end := mst.MaxPhyOffset()
	require.Eventually(t, func() bool { return sst.MaxPhyOffset() == end }, 5*time.Second, time.Millisecond)
	require.True(t, bytes.Equal(rawBytes(t, mst, 0, end), rawBytes(t, sst, 0, end)), "commit logs differ")

	slave.waitDispatched(t, "Repl", 0, n)
	// Runtime info as Java's: the services of a master run only there; the
	// slave counts the replicated records it dispatched, the master its puts.
	for _, side := range []struct {
		tb     *testBroker
		active string
	}{{master, "true"}, {slave, "false"}} {
		info := runtimeTable(t, side.tb)
		require.Equal(t, side.active, info["brokerActive"])
		require.Equal(t, fmt.Sprint(n), info["putMessageTimesTotal"])
		require.Equal(t, fmt.Sprint(end), info["putMessageSizeTotal"])
	}
	// Topic configs reach a slave by the metadata sync (slavesync.go);
	// here the topic is created on the slave directly.
	resp := slave.invoke(t, request(codec.ReqUpdateAndCreateTopic, "topic", "Repl", "defaultTopic", "TBW102",
		"readQueueNums", "4", "writeQueueNums", "4", "perm", "6", "topicFilterType", "SINGLE_TAG", "order", "false"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	resp = slave.invoke(t, pullReq("g", "Repl", 0, 0, pullFlagSubscription, 0, "*"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	recs := decodeRecords(t, resp.Body)
	require.Len(t, recs, 32)
	require.Equal(t, "body-0", string(recs[0].Body))

	// The slave refuses sends.
	resp = slave.invoke(t, sendV1("Repl", 0, props("UNIQ_KEY", "s"), []byte("x")))
	require.Equal(t, int32(codec.RespSystemBusy), resp.Code)

	// Slave gone: FLUSH_SLAVE_TIMEOUT after slaveTimeout, message stored.
	stopSlave()
	require.Eventually(t, func() bool { return len(master.HASlaves()) == 0 }, 5*time.Second, 5*time.Millisecond)
	before := master.store.MaxOffset("Repl", 0)
	start := time.Now()
	resp = master.invoke(t, sendV1("Repl", 0, props("UNIQ_KEY", "lost"), []byte("no-slave")))
	require.Equal(t, int32(codec.RespFlushSlaveTimeout), resp.Code, resp.Remark)
	require.GreaterOrEqual(t, time.Since(start), 250*time.Millisecond)
	require.NotEmpty(t, ext(t, resp, "msgId"), "a FLUSH_SLAVE_TIMEOUT send is stored")
	master.waitDispatched(t, "Repl", 0, before+1)

	// The slave returns: it catches up and sends succeed again.
	slave, _ = startBrokerAt(t, slaveRoot, slaveCfg)
	require.Eventually(t, func() bool {
		resp := master.invoke(t, sendV1("Repl", 0, props("UNIQ_KEY", "back"), []byte("back")))
		return resp.Code == int32(codec.RespSuccess)
	}, 10*time.Second, 10*time.Millisecond)
	sst = slave.store.(*store.Store)
	end = mst.MaxPhyOffset()
	require.Eventually(t, func() bool { return sst.MaxPhyOffset() == end }, 5*time.Second, time.Millisecond)
	require.True(t, bytes.Equal(rawBytes(t, mst, 0, end), rawBytes(t, sst, 0, end)), "commit logs differ after catch-up")
}

// The registration reply's haServerAddr points a slave's HA client at its
// master unless haMasterAddress is configured.
func TestRegisterResultSetsMasterHA(t *testing.T) {
	tb := startBroker(t, func(c *Config) { c.BrokerRole = "SLAVE"; c.BrokerID = 1 })
	tb.onRegisterResult("127.0.0.1:10911", "127.0.0.1:10912")
	require.Equal(t, "127.0.0.1:10911", tb.MasterAddr())
	st, ok := tb.HAClientStatus()
	require.True(t, ok)
	require.Equal(t, "127.0.0.1:10912", st.MasterAddr)

	fixed := startBroker(t, func(c *Config) { c.BrokerRole = "SLAVE"; c.BrokerID = 1; c.HaMasterAddress = "127.0.0.1:20912" })
	fixed.onRegisterResult("127.0.0.1:10911", "127.0.0.1:10912")
	st, _ = fixed.HAClientStatus()
	require.Equal(t, "127.0.0.1:20912", st.MasterAddr, "haMasterAddress is fixed")
	require.Equal(t, "127.0.0.1:10911", fixed.MasterAddr())
}

// With a name server and no haMasterAddress, a slave learns its master's
// HA address from the REGISTER_BROKER reply (haServerAddr = brokerIP2 and
// the bound HA port the master advertised) and replicates.
func TestSlaveFindsMasterByNameServer(t *testing.T) {
	ns := startNamesrv(t)
	master := startBroker(t, func(c *Config) { c.NamesrvAddr = ns; c.HaListenPort = 0 })
	slave := startBroker(t, func(c *Config) {
		c.NamesrvAddr = ns
		c.BrokerRole = "SLAVE"
		c.BrokerID = 1
		c.HaSendHeartbeatInterval = 200
	})
	require.Equal(t, master.BrokerAddr(), slave.MasterAddr())
	st, ok := slave.HAClientStatus()
	require.True(t, ok)
	require.Equal(t, master.HAAddr(), st.MasterAddr)

	resp := master.invoke(t, sendV1("ReplNS", 0, props("UNIQ_KEY", "u"), []byte("x")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	end := master.store.MaxPhyOffset()
	require.Eventually(t, func() bool { return slave.store.MaxPhyOffset() == end }, 5*time.Second, time.Millisecond)

	// The route lists both: the master as brokerId 0, the slave as 1.
	resp = master.route(t, ns, "TBW102")
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Contains(t, string(resp.Body), `0:"`+master.BrokerAddr()+`"`)
	require.Contains(t, string(resp.Body), `1:"`+slave.BrokerAddr()+`"`)
}

// runtimeTable is a broker's GET_BROKER_RUNTIME_INFO table.
func runtimeTable(t *testing.T, tb *testBroker) map[string]string {
	t.Helper()
	resp := tb.invoke(t, request(codec.ReqGetBrokerRuntimeInfo))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	var kv struct {
		Table map[string]string `json:"table"`
	}
	require.NoError(t, json.Unmarshal(resp.Body, &kv))
	return kv.Table
}
