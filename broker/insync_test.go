package broker

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// UPDATE_BROKER_CONFIG inSyncReplicas applies at once, as on Java 5.3.3
// (checked by hand: a SYNC_MASTER without slaves answers SUCCESS, then
// FLUSH_SLAVE_TIMEOUT after inSyncReplicas=2, then SUCCESS after 1). Both
// halves move: with a slave connected, sends keep succeeding after the
// raise (the HA server's quorum counts it); without it they time out (the
// store waits for a slave); lowering it again stops the wait.
func TestUpdateInSyncReplicasLive(t *testing.T) {
	master := startBroker(t, func(c *Config) {
		c.BrokerRole = "SYNC_MASTER"
		c.HaListenPort = 0
		c.SlaveTimeout = 300
		c.HaSendHeartbeatInterval = 200
	})
	slave, stopSlave := startBrokerAt(t, t.TempDir(), func(c *Config) {
		c.BrokerRole, c.BrokerID = "SLAVE", 1
		c.HaMasterAddress = master.HAAddr()
		c.HaSendHeartbeatInterval = 200
	})
	require.True(t, slave.IsSlave())
	require.Eventually(t, func() bool { return len(master.HASlaves()) == 1 }, 5*time.Second, 5*time.Millisecond)

	i := 0
	send := func() *codec.Frame {
		i++
		return master.invoke(t, sendV1("ISR", 0, props("UNIQ_KEY", fmt.Sprint("u", i)), []byte("x")))
	}
	update := func(conf string) {
		req := request(codec.ReqUpdateBrokerConfig)
		req.Body = []byte(conf)
		resp := master.invoke(t, req)
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	require.Equal(t, int32(codec.RespSuccess), send().Code)

	update("inSyncReplicas=2\n")
	require.Contains(t, string(master.appendProperties(nil)), "\ninSyncReplicas=2\n")
	for range 5 {
		resp := send()
		require.Equal(t, int32(codec.RespSuccess), resp.Code, "the slave's acks count: %s", resp.Remark)
	}

	stopSlave()
	require.Eventually(t, func() bool { return len(master.HASlaves()) == 0 }, 5*time.Second, 5*time.Millisecond)
	resp := send()
	require.Equal(t, int32(codec.RespFlushSlaveTimeout), resp.Code, resp.Remark)

	// slaveTimeout applies at once too (Java reads it per put): 3 s → the
	// next send waits about 3 s, not 300 ms.
	update("slaveTimeout=3000\n")
	start := time.Now()
	resp = send()
	require.Equal(t, int32(codec.RespFlushSlaveTimeout), resp.Code, resp.Remark)
	require.GreaterOrEqual(t, time.Since(start), 2500*time.Millisecond, "the raised slaveTimeout did not apply")

	update("inSyncReplicas=1\n")
	start = time.Now()
	require.Equal(t, int32(codec.RespSuccess), send().Code)
	require.Less(t, time.Since(start), 250*time.Millisecond, "no wait for a slave")
}
