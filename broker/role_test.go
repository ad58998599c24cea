package broker

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/compat/remarks"
	"github.com/rocketgo/rocketgo/store"
)

// A role change by a direct call: master → slave → master. The slave
// refuses what Java's slave refuses, the master-only services and the HA
// server stop and start again, and the restarted delay service delivers.
func TestRoleChangeAtRunTime(t *testing.T) {
	tb := startBroker(t, func(c *Config) { c.HaListenPort = 0 })
	require.False(t, tb.IsSlave())
	require.NotEmpty(t, tb.HAAddr())
	require.True(t, tb.servicesRunning())

	resp := tb.invoke(t, sendV1("RoleT", 0, props("UNIQ_KEY", "u1"), []byte("m1")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)

	require.Error(t, tb.SetRole(store.Slave, 0, ""), "a slave needs brokerId > 0")
	require.NoError(t, tb.SetRole(store.Slave, 1, "127.0.0.1:1"))
	require.True(t, tb.IsSlave())
	require.Equal(t, store.Slave, tb.Role())
	require.Equal(t, int64(1), tb.role.BrokerID())
	require.Empty(t, tb.HAAddr(), "a slave serves no HA port")
	_, ok := tb.HAClientStatus()
	require.True(t, ok, "a slave runs the HA client")
	require.False(t, tb.servicesRunning())
	require.Equal(t, store.Slave, tb.store.(*store.Store).Role())

	resp = tb.invoke(t, sendV1("RoleT", 0, props("UNIQ_KEY", "u2"), []byte("m2")))
	require.Equal(t, int32(codec.RespSystemBusy), resp.Code)
	require.Equal(t, remarks.RejectRequest, resp.Remark)
	resp = tb.invoke(t, pullReq("g", "RoleT", 0, 0, pullFlagSubscription, 0, "*"))
	require.Equal(t, int32(codec.RespSystemBusy), resp.Code, "slaveReadEnable is off")
	require.Equal(t, remarks.RejectRequest, resp.Remark)
	resp = tb.invoke(t, request(codec.ReqEndTransaction, "producerGroup", "pg", "tranStateTableOffset", "0",
		"commitLogOffset", "0", "commitOrRollback", "8", "fromTransactionCheck", "false", "msgId", "x"))
	require.Equal(t, int32(codec.RespSlaveNotAvailable), resp.Code)
	resp = tb.invoke(t, request(codec.ReqConsumerSendMsgBack, "offset", "0", "group", "g", "delayLevel", "0",
		"originMsgId", "x", "originTopic", "RoleT", "maxReconsumeTimes", "16"))
	require.Equal(t, int32(codec.RespSystemBusy), resp.Code)
	resp = tb.invoke(t, request(codec.ReqInvokeBrokerToResetOffset, "topic", "RoleT", "group", "g", "timestamp", "0", "isForce", "true"))
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "Can not reset offset in slave broker", resp.Remark)
	// Admin writes are served: Java 5.x lets mqadmin operate a slave
	// (apache/rocketmq#7351 dropped validateSlave's calls).
	resp = tb.invoke(t, request(codec.ReqUpdateAndCreateTopic, "topic", "RoleS", "defaultTopic", "TBW102",
		"readQueueNums", "4", "writeQueueNums", "4", "perm", "6", "topicFilterType", "SINGLE_TAG", "order", "false"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)

	require.NoError(t, tb.SetRole(store.AsyncMaster, 1, ""))
	require.False(t, tb.IsSlave())
	require.Equal(t, int64(0), tb.role.BrokerID(), "a master's brokerId is 0")
	require.NotEmpty(t, tb.HAAddr())
	_, ok = tb.HAClientStatus()
	require.False(t, ok)
	require.True(t, tb.servicesRunning())

	// The restarted delay service delivers a level-1 (1 s) message.
	resp = tb.invoke(t, sendV1("RoleT", 0, props("UNIQ_KEY", "u3", "DELAY", "1"), []byte("m3")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Eventually(t, func() bool { return tb.store.MaxOffset("RoleT", 0) >= 2 }, 10*time.Second, 10*time.Millisecond)
	resp = tb.invoke(t, pullReq("g", "RoleT", 0, 0, pullFlagSubscription, 0, "*"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Len(t, decodeRecords(t, resp.Body), 2)

	// The restarted timer service delivers a 1 s timer message.
	resp = tb.invoke(t, sendV1("RoleTM", 0, props("UNIQ_KEY", "u4", "TIMER_DELAY_SEC", "1"), []byte("m4")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Eventually(t, func() bool { return tb.store.MaxOffset("RoleTM", 0) >= 1 }, 10*time.Second, 10*time.Millisecond)

	// SYNC_MASTER ↔ ASYNC_MASTER only changes the store's put policy.
	require.NoError(t, tb.SetRole(store.SyncMaster, 0, ""))
	require.Equal(t, store.SyncMaster, tb.store.(*store.Store).Role())
	require.True(t, tb.servicesRunning())
}

// A slave's pulls are served when slaveReadEnable is on.
func TestSlaveReadEnable(t *testing.T) {
	tb := startBroker(t, func(c *Config) { c.HaListenPort = 0; c.SlaveReadEnable = true })
	resp := tb.invoke(t, sendV1("RoleR", 0, props("UNIQ_KEY", "u1"), []byte("m1")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	tb.waitDispatched(t, "RoleR", 0, 1)
	require.NoError(t, tb.SetRole(store.Slave, 1, ""))
	resp = tb.invoke(t, pullReq("g", "RoleR", 0, 0, pullFlagSubscription, 0, "*"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Len(t, decodeRecords(t, resp.Body), 1)
}

func TestConfigRoleValidation(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.BrokerRole = "SLAVE"
	require.Error(t, cfg.Validate(), "a SLAVE with brokerId 0")
	cfg.BrokerID = 1
	require.NoError(t, cfg.Validate())
	cfg.BrokerRole = "MASTER"
	require.Error(t, cfg.Validate())

	cfg = testConfig(t.TempDir())
	cfg.ListenPort = 20911
	require.NoError(t, cfg.Validate())
	require.Equal(t, 20912, cfg.HaListenPort, "haListenPort defaults to listenPort+1")
}

func (b *Broker) servicesRunning() bool {
	b.roleMu.Lock()
	defer b.roleMu.Unlock()
	return b.rrt.services
}

// Start fails, as Java's does, when the HA port is taken; Close cleans up.
func TestStartFailsOnBusyHAPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	cfg := testConfig(t.TempDir())
	cfg.HaListenPort = ln.Addr().(*net.TCPAddr).Port
	st, err := openTestStore(&cfg)
	require.NoError(t, err)
	defer st.Close()
	b, err := New(cfg, Deps{Logger: testLogger(), Store: st})
	require.NoError(t, err)
	require.ErrorContains(t, b.Start(), "ha: listen")
	require.NoError(t, b.Close())
}
