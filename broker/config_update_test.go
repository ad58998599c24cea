package broker

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/compat/javaprops"
)

// configState is what an update may change: the GET_BROKER_CONFIG text,
// the -c file and the live values processors read.
type configState struct {
	text, file        string
	perm              int32
	shortPoll, slaveT int64
}

func readConfigState(t *testing.T, tb *testBroker, confPath string) configState {
	t.Helper()
	file, err := os.ReadFile(confPath)
	require.NoError(t, err)
	tb.cfgMu.Lock()
	slaveT := int64(tb.cfg.SlaveTimeout)
	tb.cfgMu.Unlock()
	return configState{text: brokerConfigText(t, tb), file: string(file), perm: tb.live.perm.Load(),
		shortPoll: tb.live.shortPollMs.Load(), slaveT: slaveT}
}

const updateTestConf = "brokerClusterName=C1\nbrokerName=broker-a\nbrokerIP1=127.0.0.1\nlistenIP=127.0.0.1\n"

// startFromFile runs a broker on root configured like the tests' brokers
// and then from the file at confPath, as mqbroker -c does.
func startFromFile(t *testing.T, root, confPath string) (*testBroker, func()) {
	t.Helper()
	return startBrokerAt(t, root, func(c *Config) {
		_, err := c.LoadFile(confPath)
		require.NoError(t, err)
		c.ListenPort, c.FastListen = 0, false // the file keeps no port: any free one on 127.0.0.1
	})
}

// Keys the broker reads only at start-up (identity, addresses, ports, mode,
// role, the timer wheel's slot width) are refused with Java's black-list
// answer, alone or beside an allowed key: nothing applied, nothing
// written. (The old broker took listenPort, brokerIP1 and
// enableControllerMode and wrote them into its -c file.)
func TestUpdateBrokerConfigRefusesStartupKeys(t *testing.T) {
	confPath := filepath.Join(t.TempDir(), "broker.conf")
	require.NoError(t, os.WriteFile(confPath, []byte(updateTestConf), 0o644))
	tb, _ := startFromFile(t, t.TempDir(), confPath)
	before := readConfigState(t, tb, confPath)

	for _, body := range []string{
		"listenPort=10000",
		"brokerIP1=10.1.2.3",
		"brokerIP2=10.1.2.3",
		"haListenPort=10002",
		"haMasterAddress=10.1.2.3:10912",
		"controllerAddr=10.1.2.3:9878",
		"enableControllerMode=true",
		"enableFastChannel=true",
		"brokerName=broker-b",
		"brokerClusterName=C2",
		"brokerId=3",
		"brokerRole=SLAVE",
		"timerPrecisionMs=100",
		"storePathRootDir=" + t.TempDir(),
		"brokerPermission=4\nlistenPort=10000", // one refused key refuses all
		"shortPollingTimeMills=500\nbrokerIP1=10.1.2.3",
	} {
		resp := updateConfig(t, tb, body)
		require.Equal(t, int32(codec.RespNoPermission), resp.Code, body)
		require.Equal(t, "Can not update config in black list.", resp.Remark, body)
		require.Equal(t, before, readConfigState(t, tb, confPath), body)
	}
	tb.cfgMu.Lock()
	require.Empty(t, tb.pending)
	tb.cfgMu.Unlock()
}

// Values out of range, and values that contradict each other or the
// restart-only values updated before them, fail the whole update with
// SYSTEM_ERROR naming the key: the running config, the live values and
// the -c file stay as they were.
func TestUpdateBrokerConfigRefusesBadValues(t *testing.T) {
	confPath := filepath.Join(t.TempDir(), "broker.conf")
	// The file has its own heartbeat; the running broker the default 5 s.
	require.NoError(t, os.WriteFile(confPath, []byte(updateTestConf+"haSendHeartbeatInterval=15000\nhaHousekeepingInterval=30000\n"), 0o644))
	tb, _ := startBrokerAt(t, t.TempDir(), func(c *Config) { c.BrokerConfigPath = confPath })
	before := readConfigState(t, tb, confPath)

	for _, tc := range []struct{ body, key string }{
		{"maxMessageSize=999999999", "maxMessageSize"},
		{"maxMessageSize=16777216", "maxMessageSize"}, // the whole frame, no room for a header
		{"maxMessageSize=0", "maxMessageSize"},
		{"maxMessageSize=-1", "maxMessageSize"},
		{"maxMessageSize=99999999999", "maxMessageSize"},      // beyond Java's int
		{"maxMessageSize=4194304", "mappedFileSizeCommitLog"}, // in range, but no record that big fits a 4 MiB segment
		{"brokerPermission=4294967302", "brokerPermission"},   // was truncated to 6
		{"brokerPermission=16", "brokerPermission"},
		{"brokerPermission=-1", "brokerPermission"},
		{"accessMessageInMemoryMaxRatio=101", "accessMessageInMemoryMaxRatio"},
		{"accessMessageInMemoryMaxRatio=-1", "accessMessageInMemoryMaxRatio"},
		{"shortPollingTimeMills=0", "shortPollingTimeMills"},
		{"shortPollingTimeMills=-5", "shortPollingTimeMills"},
		{"slaveTimeout=0", "slaveTimeout"},
		{"waitTimeMillsInSendQueue=-1", "waitTimeMillsInSendQueue"},
		{"transactionCheckInterval=0", "transactionCheckInterval"},
		{"maxTransferCountOnMessageInMemory=0", "maxTransferCountOnMessageInMemory"},
		{"registerNameServerPeriod=9999999999999999", "registerNameServerPeriod"}, // overflows a time.Duration
		{"pullThreadPoolQueueCapacity=2000000000", "pullThreadPoolQueueCapacity"},
		{"sendMessageThreadPoolNums=100000000", "sendMessageThreadPoolNums"},
		{"messageDelayLevel=0s 5s", "messageDelayLevel"},
		{"messageDelayLevel=" + strings.Repeat("1s ", 2000), "maxTopicQueueNums"},
		{"haHousekeepingInterval=5000", "haSendHeartbeatInterval"}, // the master would drop every slave
		{"haSendHeartbeatInterval=20000", "haHousekeepingInterval"},
		{"brokerHeartbeatInterval=10000", "controllerHeartBeatTimeoutMills"},
		// Valid for the running broker (5 s heartbeat), not for the file
		// it restarts from (15 s).
		{"haHousekeepingInterval=10000", "would not start"},
		{"brokerPermission=4\nshortPollingTimeMills=500\nmaxMessageSize=999999999", "maxMessageSize"}, // one bad key refuses all
	} {
		resp := updateConfig(t, tb, tc.body)
		require.Equal(t, int32(codec.RespSystemError), resp.Code, tc.body)
		require.Contains(t, resp.Remark, tc.key, tc.body)
		require.Equal(t, before, readConfigState(t, tb, confPath), tc.body)
	}

	// A restart-only value updated earlier counts: with housekeeping at
	// 40 s pending, a heartbeat of 45 s contradicts it.
	require.Equal(t, int32(codec.RespSuccess), updateConfig(t, tb, "haHousekeepingInterval=40000").Code)
	resp := updateConfig(t, tb, "haSendHeartbeatInterval=45000")
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Contains(t, resp.Remark, "haHousekeepingInterval=40000")
	require.NotContains(t, resp.Remark, "would not start", "refused on the running config already")
	file, err := os.ReadFile(confPath)
	require.NoError(t, err)
	require.Contains(t, string(file), "haSendHeartbeatInterval=15000\n")
	require.Contains(t, string(file), "haHousekeepingInterval=40000\n")
}

// A valid update applies its runtime keys live and persists all of them,
// and a broker started again from the file it wrote starts with them,
// after a series of refused updates that the old broker wrote into the
// file (it then failed to start: maxMessageSize beyond its segments, a
// port already taken).
func TestUpdateBrokerConfigPersistsAStartableFile(t *testing.T) {
	confPath := filepath.Join(t.TempDir(), "broker.conf")
	require.NoError(t, os.WriteFile(confPath, []byte(updateTestConf), 0o644))
	root := t.TempDir()
	tb, stop := startFromFile(t, root, confPath)
	_, port, err := net.SplitHostPort(tb.addr)
	require.NoError(t, err)
	for _, body := range []string{
		"maxMessageSize=999999999",
		"listenPort=" + port,
		"brokerIP1=not-an-ip",
		"enableControllerMode=true",
		"haHousekeepingInterval=1",
	} {
		require.NotEqual(t, int32(codec.RespSuccess), updateConfig(t, tb, body).Code, body)
	}

	resp := updateConfig(t, tb, "brokerPermission=4\nshortPollingTimeMills=500\nslaveTimeout=2000\nmaxMessageSize=2097152\nmessageDelayLevel=1s 2s\nnoSuchKey=1\n")
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Equal(t, int32(4), tb.live.perm.Load())
	require.Equal(t, int64(500), tb.live.shortPollMs.Load())
	text := brokerConfigText(t, tb)
	for _, kv := range []string{"brokerPermission=4", "shortPollingTimeMills=500", "slaveTimeout=2000", "maxMessageSize=2097152", "messageDelayLevel=1s 2s"} {
		require.Contains(t, text, "\n"+kv+"\n")
	}
	file, err := os.ReadFile(confPath)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(file, []byte("brokerClusterName=C1\n")), string(file))
	for _, kv := range []string{"brokerPermission=4", "shortPollingTimeMills=500", "slaveTimeout=2000", "maxMessageSize=2097152", "messageDelayLevel=1s 2s"} {
		require.Contains(t, string(file), kv+"\n")
	}
	for _, k := range []string{"noSuchKey", "listenPort", "enableControllerMode", "haHousekeepingInterval"} {
		require.NotContains(t, string(file), k)
	}
	require.Contains(t, string(file), "brokerIP1=127.0.0.1\n")
	fileProps, err := javaprops.Parse(file)
	require.NoError(t, err)
	require.NoError(t, validateConfigFile(fileProps))
	stop()

	// The next start reads the file: restart-only values now apply.
	tb, _ = startFromFile(t, root, confPath)
	require.Equal(t, 2097152, tb.cfg.MaxMessageSize)
	require.Equal(t, int32(4), tb.live.perm.Load())
	require.Len(t, tb.delays.levels, 2)
	require.Equal(t, "C1", tb.cfg.BrokerClusterName)
	tb.topics.createIfAbsent("Big", 1, 6, 0)
	require.Equal(t, int32(codec.RespSuccess), updateConfig(t, tb, "brokerPermission=6").Code)
	big := bytes.Repeat([]byte("b"), 3<<19) // 1.5 MiB: above the old 1 MiB, below the new 2 MiB
	resp = tb.invoke(t, sendV1("Big", 0, "", big))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
}

// Every setting in range on its own but not together is refused at start
// as well as by an update (Validate is the one check).
func TestConfigValidateRanges(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*Config)
	}{
		{"maxMessageSize above the frame", func(c *Config) { c.MaxMessageSize = MaxMessageSizeLimit + 1 }},
		{"maxMessageSize above the segment", func(c *Config) { c.MaxMessageSize, c.MappedFileSizeCommitLog = 1<<20, 1<<20 }},
		{"brokerIP1 not an address", func(c *Config) { c.BrokerIP1 = "broker.example" }},
		{"housekeeping within a heartbeat", func(c *Config) { c.HaHousekeepingInterval = c.HaSendHeartbeatInterval }},
		{"negative delay level", func(c *Config) { c.MessageDelayLevel = "1s -5s" }},
		{"delay level overflows", func(c *Config) { c.MessageDelayLevel = "999999999999d" }},
	} {
		c := testConfig(t.TempDir())
		tc.mutate(&c)
		require.Error(t, c.Validate(), tc.name)
	}
	c := testConfig(t.TempDir())
	c.MaxMessageSize, c.MappedFileSizeCommitLog = MaxMessageSizeLimit, 1<<30
	require.NoError(t, c.Validate())
	d := DefaultConfig()
	require.NoError(t, d.Validate(), "Java's defaults start")
}
